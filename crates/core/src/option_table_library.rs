//! fio's engines that need a library or a plug-in ssdready does not have —
//! Ceph's `rbd` and `rados`, `rdma`, `http`, `nfs`, `nbd`, GlusterFS's
//! `gfapi`, `xnvme`, `libiscsi`, `libcufile`, DAOS's `dfs`, SPDK's plug-ins
//! and any external engine given by path (`ioengine=/path/spdk_nvme`,
//! `ioengine=external:/path/engine.so`) — and their options.
//!
//! A job file that uses one parses, as it does with a fio built with the
//! library (Ceph's and the cloud providers' benchmark files are written for
//! such builds); a run refuses the job, saying what is missing, as a fio
//! built without the library refuses it. An engine option belongs to its
//! engines: `pool=` in a job whose engine is `libaio` is an error, as fio
//! drops such a job ("Bad option").

use crate::option_def::{Arity, OptionDef};
use crate::spec::{JobSpec, SpecError};

/// (engine, what it needs that ssdready does not have).
pub static LIBRARY_ENGINES: &[(&str, &str)] = &[
    (
        "rbd",
        "Ceph's librbd (a RADOS block device image reached over the network)",
    ),
    ("rados", "Ceph's librados (objects in a RADOS pool)"),
    (
        "rdma",
        "libibverbs and librdmacm (an RDMA network adapter and a peer)",
    ),
    (
        "http",
        "libcurl and OpenSSL (an HTTP, S3 or Swift object store)",
    ),
    ("nfs", "libnfs (an NFS server reached from user space)"),
    ("nbd", "libnbd (a network block device server)"),
    ("gfapi", "GlusterFS's libgfapi"),
    ("gfapi_async", "GlusterFS's libgfapi"),
    (
        "libiscsi",
        "libiscsi (an iSCSI target reached from user space)",
    ),
    ("libcufile", "NVIDIA's cuFile (GPUDirect Storage)"),
    ("dfs", "DAOS's libdfs"),
    ("xnvme", "the xNVMe library"),
    (
        "spdk",
        "SPDK's fio plug-in (spdk_nvme, loaded with LD_PRELOAD or by path)",
    ),
    (
        "spdk_bdev",
        "SPDK's bdev fio plug-in (spdk_bdev, loaded with LD_PRELOAD or by path)",
    ),
    ("spdk_blobfs", "SPDK's BlobFS fio plug-in"),
];

/// What a job naming `engine` needs, when it is one of
/// [`LIBRARY_ENGINES`] or an external engine given by path.
pub fn needs(engine: &str) -> Option<String> {
    if let Some((_, why)) = LIBRARY_ENGINES.iter().find(|(e, _)| *e == engine) {
        return Some(why.to_string());
    }
    is_external(engine).then(|| {
        let path = engine.strip_prefix("external:").unwrap_or(engine);
        format!("the external engine {path} (a shared object fio loads with dlopen; ssdready loads none)")
    })
}

/// `ioengine=/path/to/engine` or `ioengine=external:/path/to/engine.so`.
pub fn is_external(engine: &str) -> bool {
    engine.starts_with("external:") || engine.contains('/')
}

/// The engines each option belongs to (fio's per-engine option tables:
/// `fio --enghelp=rbd` and the others, fio 3.33). An external engine by
/// path takes the SPDK plug-ins' options.
static OWNERS: &[(&str, &[&str])] = &[
    ("arguments", &["exec"]),
    ("bindname", &["rdma"]),
    ("brick", &["gfapi", "gfapi_async"]),
    ("busy_poll", &["rbd", "rados"]),
    ("clientname", &["rbd", "rados"]),
    ("clustername", &["rbd", "rados"]),
    ("conf", &["rados"]),
    ("cuda_io", &["libcufile"]),
    ("gpu_dev_ids", &["libcufile"]),
    ("hostname", &["rdma", "net", "netsplice"]),
    ("http_host", &["http"]),
    ("http_mode", &["http"]),
    ("http_pass", &["http"]),
    ("http_s3_key", &["http"]),
    ("http_s3_keyid", &["http"]),
    ("http_s3_region", &["http"]),
    ("http_swift_auth_token", &["http"]),
    ("http_user", &["http"]),
    ("http_verbose", &["http"]),
    ("https", &["http"]),
    ("initiator", &["libiscsi"]),
    ("nfs_url", &["nfs"]),
    ("pool", &["rbd", "rados", "dfs"]),
    ("port", &["rdma", "net", "netsplice"]),
    ("program", &["exec"]),
    ("rbdname", &["rbd"]),
    ("single-instance", &["gfapi", "gfapi_async"]),
    ("spdk_conf", &["spdk", "spdk_bdev", "spdk_blobfs"]),
    ("spdk_json_conf", &["spdk", "spdk_bdev", "spdk_blobfs"]),
    ("spdk_mem", &["spdk", "spdk_bdev", "spdk_blobfs"]),
    ("spdk_single_seg", &["spdk", "spdk_bdev", "spdk_blobfs"]),
    ("touch_objects", &["rados"]),
    ("uri", &["nbd"]),
    ("verb", &["rdma"]),
    ("volume", &["gfapi", "gfapi_async"]),
    ("xnvme_async", &["xnvme"]),
    ("xnvme_be", &["xnvme"]),
    ("xnvme_dev_nsid", &["xnvme"]),
    ("xnvme_iovec", &["xnvme"]),
    ("xnvme_mem", &["xnvme"]),
    ("xnvme_sync", &["xnvme"]),
];

macro_rules! lib_opts {
    ($($name:literal),* $(,)?) => {
        &[$(OptionDef {
            name: $name,
            aliases: &[],
            arity: Arity::Optional,
            allowed: "any value (the engine's library reads it; a run refuses the engine)",
            help: "an option of an engine that needs a library (see docs/fio.md)",
            set: |s, v| {
                crate::spec_types::set_pair(&mut s.engine_opts.library, $name, v);
                Ok(())
            },
        }),*]
    };
}

/// The options of `OWNERS`, searched with the other tables
/// ([`crate::options::all`]). Keep it in `OWNERS`' order.
pub static LIBRARY_OPTIONS: &[OptionDef] = lib_opts!(
    "arguments",
    "bindname",
    "brick",
    "busy_poll",
    "clientname",
    "clustername",
    "conf",
    "cuda_io",
    "gpu_dev_ids",
    "hostname",
    "http_host",
    "http_mode",
    "http_pass",
    "http_s3_key",
    "http_s3_keyid",
    "http_s3_region",
    "http_swift_auth_token",
    "http_user",
    "http_verbose",
    "https",
    "initiator",
    "nfs_url",
    "pool",
    "port",
    "program",
    "rbdname",
    "single-instance",
    "spdk_conf",
    "spdk_json_conf",
    "spdk_mem",
    "spdk_single_seg",
    "touch_objects",
    "uri",
    "verb",
    "volume",
    "xnvme_async",
    "xnvme_be",
    "xnvme_dev_nsid",
    "xnvme_iovec",
    "xnvme_mem",
    "xnvme_sync",
);

/// Every engine option of `spec` belongs to its engine, as fio checks it
/// when it loads the engine's option table.
pub fn check(spec: &JobSpec) -> Result<(), SpecError> {
    let engine = spec
        .engine_named
        .clone()
        .unwrap_or_else(|| spec.ioengine.name().to_string());
    for (name, _) in &spec.engine_opts.library {
        let owners = OWNERS
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&[][..], |(_, o)| *o);
        let external = is_external(&engine) && name.starts_with("spdk_");
        if !owners.contains(&engine.as_str()) && !external {
            return Err(SpecError::new(
                name,
                format!(
                    "is an option of ioengine={}, not of this job's ioengine={engine}",
                    owners.join(" or ioengine=")
                ),
            )
            .in_job(&spec.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_owners_list_agree() {
        assert_eq!(LIBRARY_OPTIONS.len(), OWNERS.len());
        for (d, (n, owners)) in LIBRARY_OPTIONS.iter().zip(OWNERS) {
            assert_eq!(d.name, *n);
            assert!(!owners.is_empty());
            assert!(crate::optsets::ignored(n).is_none(), "{n}");
        }
    }

    #[test]
    fn external_engines_and_libraries_say_what_is_missing() {
        assert!(needs("rbd").unwrap().contains("librbd"));
        assert!(needs("/usr/src/spdk/build/fio/spdk_nvme")
            .unwrap()
            .contains("/usr/src/spdk/build/fio/spdk_nvme"));
        assert!(needs("external:/x/e.so").unwrap().contains("/x/e.so"));
        assert!(needs("libaio").is_none());
    }
}
