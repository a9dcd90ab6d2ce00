//! Exact CPU time by state: small eBPF programs on the tracepoints that
//! bracket each kind of CPU work (system call entry and exit, hard and soft
//! interrupts, the x86 system-vector interrupts, context switches, cpuidle
//! entry and exit) keep, per CPU, a state machine that charges the time
//! since the previous event (`bpf_ktime_get_ns`, CLOCK_MONOTONIC) to the
//! state the CPU was in. Unlike a sampling profile, nothing is missed when a
//! vCPU halts and wakes: every nanosecond of every CPU is in exactly one
//! state, so the states add up to the window × CPUs.
//!
//! Per-CPU value (u64 words): 0 the last event's time, 1 the base state
//! (what the CPU runs outside interrupts), 2 in a hard interrupt (0 or 1),
//! 3 in a soft interrupt, 4 the block phase outside interrupts, 5 the
//! contexts in a request's completion, then one accumulator (ns) per
//! [`STATES`] entry. The state charged is `hardirq` while in a hard
//! interrupt, else `softirq` while in a soft one, else the block phase if
//! any, else the base state; `block completion` replaces any of these while
//! the context charged is completing a request.
//!
//! The block layer's own tracepoints split the kernel's time further
//! (every task's, not only this process's):
//! - `block_bio_queue` → `block_plug` (the request parked in the task's
//!   plug list) or `block_rq_issue`; `block_unplug` → `block_rq_issue`:
//!   block layer submission. `io_uring_submit_req` ends it: io_uring's next
//!   request is io_uring's. A request added to a plug list that already
//!   holds one fires no `block_plug`: the submitter's code up to its next
//!   event (io_uring's next request, the system call's exit) is then
//!   charged to the block layer.
//! - `block_rq_issue` → the context's next event: the driver's `queue_rq`
//!   (which stamps the issue as it starts) and the return through the
//!   block layer to the submitter; no tracepoint marks where the driver
//!   returns, so this is "driver submission and return".
//! - `block_rq_complete` → `block_io_done`, in the context (task, softirq,
//!   hardirq) that began it: ending the bios, the waiter's wake-up
//!   included, and the request's accounting. A batch completing several
//!   requests ends at the first one's accounting.
//!
//! A context switch, a system call's entry or exit and the idle loop end
//! the task's block phase; a task switched out inside the block layer
//! (waiting for a tag, preempted) resumes charged to its base state until
//! its next block event.
//!
//! What each event does to the base state:
//! - `sys_enter`: system call, this process's or another's (by tgid);
//! - `sys_exit`: user, this process's or another's;
//! - `sched_switch` to the idle task: idle loop; to a kernel thread
//!   (`PF_KTHREAD`): kernel thread; to a user task: user if it was last
//!   switched out on its way back to user mode (neither preempted in the
//!   kernel nor blocking: a per-pid LRU hash remembers), else it resumes in
//!   the kernel where it blocked, so system call; both by tgid;
//! - `cpu_idle` (enter): idle (halted, or in a cpuidle state); exit: idle
//!   loop. Idle-loop time that ends in a context switch (the idle task
//!   restarting the tick and switching out) is charged as "leaving", busy
//!   as /proc/stat counts it; the rest of the idle loop is idle there too.
//!
//! Limits, stated where the figures are used: a task that yields the CPU
//! from a system call (`sched_yield`) resumes in it but is charged as user
//! until its `sys_exit`, and a task first seen when it is switched in after
//! a user-mode preemption is charged as system call until its next system
//! call or switch; the interrupt entry code before
//! a handler's tracepoint is charged to the interrupted state; exceptions
//! (page faults) are charged to the state they interrupt.

use super::programs::*;
use super::{attach, map_create, possible_cpus, prog_load, Attach, Fd};
use std::io;

/// The states, in accumulator order. The first is the state of a CPU no
/// event has been seen on yet.
pub const STATES: [&str; 14] = [
    "unknown",
    "user, this process",
    "user, other processes",
    "system calls, this process",
    "kernel, other processes",
    "kernel threads",
    "hardirq",
    "softirq",
    "idle loop (not halted)",
    "idle (halted)",
    "idle loop, leaving (tick restart, switch out)",
    "block layer submission",
    "driver submission and return",
    "block completion",
];
const UNKNOWN: i32 = 0;
const USER_OURS: i32 = 1;
const USER_OTHER: i32 = 2;
const SYS_OURS: i32 = 3;
const SYS_OTHER: i32 = 4;
const KTHREAD: i32 = 5;
const HARDIRQ: i32 = 6;
const SOFTIRQ: i32 = 7;
const IDLE_LOOP: i32 = 8;
const IDLE: i32 = 9;
/// The idle task's time from its last `cpu_idle` exit to `sched_switch`:
/// restarting the tick and switching out, which /proc/stat counts as busy
/// (idle accounting stops when `tick_nohz_idle_exit` begins).
const IDLE_LEAVING: i32 = 10;
/// `block_bio_queue` → `block_plug` or `block_rq_issue`, and
/// `block_unplug` → `block_rq_issue`, outside interrupts: the block layer
/// turning the bio into a request and dispatching it.
const BLOCK_SUBMIT: i32 = 11;
/// `block_rq_issue` → the context's next event: the driver's `queue_rq`
/// (it stamps the issue first) and the return through the block layer to
/// the submitter (no tracepoint marks the driver's return).
const DRIVER: i32 = 12;
/// `block_rq_complete` → `block_io_done` in the same context (task, soft
/// or hard interrupt): ending the bios, the submitter's wake-up included,
/// and the request's accounting.
const COMPLETION: i32 = 13;
/// Word 4: the block phase of the context outside interrupts (0 none, 1
/// block submission, 2 driver); word 5: the contexts in a request's
/// completion, one bit each (1 task, 2 softirq, 4 hardirq).
const PHASE: i16 = 32;
const COMPLETING: i16 = 40;
/// Index of the first accumulator word.
const ACC: usize = 6;
const WORDS: usize = ACC + STATES.len();
const PF_KTHREAD: i32 = 0x0020_0000;
const HELPER_PROBE_READ_KERNEL: i32 = 113;
const HELPER_UPDATE: i32 = 2;
/// Tasks remembered at once (least recently switched forgotten first).
const TASKS: u32 = 1 << 15;
const ST_DW_K: u8 = ST_DW;
const JEQ_X: u8 = 0x1d;
const AND_X_K: u8 = AND_K;

/// `struct task_struct` offsets from the kernel's BTF.
#[derive(Clone, Copy, Debug)]
pub struct TaskLayout {
    /// `flags` (u32), `pid` and `tgid` (i32).
    pub flags: u32,
    pub pid: u32,
    pub tgid: u32,
}

/// What one program does after charging the elapsed time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    /// Base state: `ours` if the current tgid is this process's, else `other`.
    ByTgid(i32, i32),
    /// Depth word `w` up or down.
    Enter(usize),
    Exit(usize),
    Switch,
    Idle,
    /// The block phase outside interrupts (a block tracepoint inside an
    /// interrupt changes nothing).
    Phase(i32),
    /// A request's completion begins or ends in the current context.
    Completing(bool),
}

/// The tracepoints and what each does; `required` ones must attach, the
/// others (x86's system-vector interrupts, the block and io_uring ones) are
/// used where they exist. A block pair is used only whole: the events after
/// `block_rq_issue` need it, those after `block_io_done` need that.
const EVENTS: [(&str, Action, bool); 25] = [
    ("sys_enter", Action::ByTgid(SYS_OURS, SYS_OTHER), true),
    ("sys_exit", Action::ByTgid(USER_OURS, USER_OTHER), true),
    ("sched_switch", Action::Switch, true),
    ("cpu_idle", Action::Idle, true),
    ("irq_handler_entry", Action::Enter(2), true),
    ("irq_handler_exit", Action::Exit(2), true),
    ("softirq_entry", Action::Enter(3), true),
    ("softirq_exit", Action::Exit(3), true),
    ("local_timer_entry", Action::Enter(2), false),
    ("local_timer_exit", Action::Exit(2), false),
    ("reschedule_entry", Action::Enter(2), false),
    ("reschedule_exit", Action::Exit(2), false),
    ("call_function_entry", Action::Enter(2), false),
    ("call_function_exit", Action::Exit(2), false),
    ("call_function_single_entry", Action::Enter(2), false),
    ("call_function_single_exit", Action::Exit(2), false),
    ("irq_work_entry", Action::Enter(2), false),
    ("irq_work_exit", Action::Exit(2), false),
    ("block_rq_issue", Action::Phase(DRIVER), false),
    ("block_bio_queue", Action::Phase(BLOCK_SUBMIT), false),
    ("block_plug", Action::Phase(0), false),
    ("block_unplug", Action::Phase(BLOCK_SUBMIT), false),
    ("io_uring_submit_req", Action::Phase(0), false),
    ("block_io_done", Action::Completing(false), false),
    ("block_rq_complete", Action::Completing(true), false),
];

/// The event an optional one is used with: it is skipped when that one
/// could not be attached.
fn needs(tp: &str) -> Option<&'static str> {
    match tp {
        "block_bio_queue" | "block_plug" | "block_unplug" | "io_uring_submit_req" => {
            Some("block_rq_issue")
        }
        "block_rq_complete" => Some("block_io_done"),
        _ => None,
    }
}

/// Charge now − last to the current state: r6 = ctx, r7 = this CPU's
/// value, r8 = now afterwards. At a context switch (`switching`), idle-loop
/// time is the idle task leaving.
///
/// The state: in a hard interrupt `hardirq`, else in a soft one `softirq`,
/// else the block phase if there is one, else the base state; and
/// `block completion` instead of any of these while the context charged
/// has its completion bit set.
fn charge(a: &mut Asm, map: i32, switching: bool) {
    a.raw(MOV_X, 6, 1, 0, 0);
    a.raw(CALL, 0, 0, 0, HELPER_KTIME);
    a.raw(MOV_X, 8, 0, 0, 0);
    a.raw(MOV_K, 1, 0, 0, 0);
    a.raw(STX_W, 10, 1, -4, 0);
    a.ld_map(1, map);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -4);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(MOV_X, 7, 0, 0, 0);
    a.raw(LDX_DW, 1, 7, 0, 0);
    a.raw(STX_DW, 7, 8, 0, 0);
    a.jmp(JEQ_K, 1, 0, 0, "charged"); // the first event on this CPU
    a.jmp(JGT_X, 1, 8, 0, "charged"); // a nested program stamped later
    a.raw(MOV_X, 2, 8, 0, 0);
    a.raw(SUB_X, 2, 1, 0, 0);
    // r3 = the state, r5 = the context's completion bit.
    a.raw(MOV_K, 3, 0, 0, HARDIRQ);
    a.raw(MOV_K, 5, 0, 0, 4);
    a.raw(LDX_DW, 4, 7, 16, 0);
    a.jmp(JNE_K, 4, 0, 0, "have_level");
    a.raw(MOV_K, 3, 0, 0, SOFTIRQ);
    a.raw(MOV_K, 5, 0, 0, 2);
    a.raw(LDX_DW, 4, 7, 24, 0);
    a.jmp(JNE_K, 4, 0, 0, "have_level");
    a.raw(MOV_K, 5, 0, 0, 1);
    a.raw(LDX_DW, 3, 7, PHASE, 0);
    a.jmp(JNE_K, 3, 0, 0, "have_level");
    a.raw(LDX_DW, 3, 7, 8, 0);
    if switching {
        a.jmp(JNE_K, 3, 0, IDLE_LOOP, "have_level");
        a.raw(MOV_K, 3, 0, 0, IDLE_LEAVING);
    }
    a.label("have_level");
    a.raw(LDX_DW, 4, 7, COMPLETING, 0);
    a.raw(AND_X, 4, 5, 0, 0);
    a.jmp(JEQ_K, 4, 0, 0, "have_state");
    a.raw(MOV_K, 3, 0, 0, COMPLETION);
    a.label("have_state");
    a.jmp(JGT_K, 3, 0, STATES.len() as i32 - 1, "charged");
    a.raw(LSH_K, 3, 0, 0, 3);
    a.raw(MOV_X, 4, 7, 0, 0);
    a.raw(ADD_X, 4, 3, 0, 0);
    a.raw(LDX_DW, 5, 4, (ACC * 8) as i16, 0);
    a.raw(ADD_X, 5, 2, 0, 0);
    a.raw(STX_DW, 4, 5, (ACC * 8) as i16, 0);
    a.label("charged");
}

const JGT_X: u8 = 0x2d;
const AND_X: u8 = 0x5f;
const OR_X: u8 = 0x4f;
const XOR_K: u8 = 0xa7;

/// Clear completion bit(s) `mask` of this CPU's value (r7).
fn clear_completing(a: &mut Asm, mask: i32) {
    a.raw(LDX_DW, 1, 7, COMPLETING, 0);
    a.raw(AND_K, 1, 0, 0, !mask);
    a.raw(STX_DW, 7, 1, COMPLETING, 0);
}

/// r5 = the current context's completion bit (4 hardirq, 2 softirq, 1 task).
fn context_bit(a: &mut Asm) {
    a.raw(MOV_K, 5, 0, 0, 4);
    a.raw(LDX_DW, 4, 7, 16, 0);
    a.jmp(JNE_K, 4, 0, 0, "have_bit");
    a.raw(MOV_K, 5, 0, 0, 2);
    a.raw(LDX_DW, 4, 7, 24, 0);
    a.jmp(JNE_K, 4, 0, 0, "have_bit");
    a.raw(MOV_K, 5, 0, 0, 1);
    a.label("have_bit");
}

/// r0 = a u32 field, at `off`, of the task at ctx args[`arg`]
/// (sched_switch's 1 `prev`, 2 `next`); out when the read fails.
fn read_task(a: &mut Asm, arg: i16, off: u32) {
    a.raw(MOV_X, 1, 10, 0, 0);
    a.raw(ADD_K, 1, 0, 0, -16);
    a.raw(MOV_K, 2, 0, 0, 4);
    a.raw(LDX_DW, 3, 6, arg * 8, 0);
    a.raw(ADD_K, 3, 0, 0, off as i32);
    a.raw(CALL, 0, 0, 0, HELPER_PROBE_READ_KERNEL);
    a.jmp(JNE_K, 0, 0, 0, "out");
    a.raw(LDX_W, 0, 10, -16, 0);
}

fn program(
    map: i32,
    resumes_in_user: i32,
    action: Action,
    tgid: u32,
    task: &TaskLayout,
) -> Vec<u64> {
    let mut a = Asm::default();
    charge(&mut a, map, action == Action::Switch);
    match action {
        Action::ByTgid(ours, other) => by_tgid(&mut a, ours, other, tgid),
        // Flags, not counters: hard interrupts do not nest on x86 (nor soft
        // ones), and an entry whose exit was missed (the programs attach one
        // by one) must not leave the CPU in an interrupt for good.
        Action::Enter(w) => a.raw(ST_DW_K, 7, 0, (w * 8) as i16, 1),
        Action::Exit(w) => {
            a.raw(ST_DW_K, 7, 0, (w * 8) as i16, 0);
            // A completion the interrupt began and did not end ends with it.
            clear_completing(&mut a, if w == 2 { 4 } else { 2 });
        }
        Action::Phase(p) => {
            a.raw(LDX_DW, 1, 7, 16, 0);
            a.jmp(JNE_K, 1, 0, 0, "out");
            a.raw(LDX_DW, 1, 7, 24, 0);
            a.jmp(JNE_K, 1, 0, 0, "out");
            a.raw(ST_DW_K, 7, 0, PHASE, p);
        }
        Action::Completing(begin) => completing(&mut a, begin),
        Action::Idle => idle(&mut a),
        Action::Switch => {
            // The next task is in no block phase (one that blocked inside
            // the block layer resumes charged to its base state).
            a.raw(ST_DW_K, 7, 0, PHASE, 0);
            clear_completing(&mut a, 1);
            remember_prev_resumes_in_user(&mut a, resumes_in_user, task);
            charge_next(&mut a, resumes_in_user, tgid, task);
        }
    }
    a.label("out");
    a.raw(MOV_K, 0, 0, 0, 0);
    a.raw(EXIT, 0, 0, 0, 0);
    a.finish()
}

/// A system call's entry or exit: the CPU's word is `ours` when the
/// current task is of `tgid`, else `other`.
fn by_tgid(a: &mut Asm, ours: i32, other: i32, tgid: u32) {
    // A system call's entry or exit ends any block phase of the
    // task context (a request's issue returns before either).
    a.raw(ST_DW_K, 7, 0, PHASE, 0);
    clear_completing(a, 1);
    a.raw(CALL, 0, 0, 0, HELPER_PID_TGID);
    a.raw(RSH_K, 0, 0, 0, 32);
    a.raw(ST_DW_K, 7, 0, 8, other);
    a.jmp(JNE_K, 0, 0, tgid as i32, "out");
    a.raw(ST_DW_K, 7, 0, 8, ours);
}

/// A completion begins (`begin`) or ends in the current context's bit.
fn completing(a: &mut Asm, begin: bool) {
    context_bit(a);
    a.raw(LDX_DW, 1, 7, COMPLETING, 0);
    if begin {
        a.raw(OR_X, 1, 5, 0, 0);
    } else {
        a.raw(XOR_K, 5, 0, 0, -1);
        a.raw(AND_X, 1, 5, 0, 0);
    }
    a.raw(STX_DW, 7, 1, COMPLETING, 0);
}

/// cpu_idle: idle on entry, the idle loop again on exit.
fn idle(a: &mut Asm) {
    a.raw(ST_DW_K, 7, 0, PHASE, 0);
    // args[0] is the state, (u32)-1 (PWR_EVENT_EXIT) on exit.
    a.raw(LDX_DW, 2, 6, 0, 0);
    a.raw(MOV32_X, 2, 2, 0, 0);
    a.ld_imm64(3, 0xffff_ffff);
    a.raw(ST_DW_K, 7, 0, 8, IDLE_LOOP);
    a.jmp(JEQ_X, 2, 3, 0, "out");
    a.raw(ST_DW_K, 7, 0, 8, IDLE);
}

/// sched_switch, first part: prev switched out on its way back to user
/// mode (not preempted in the kernel, not blocking: args[0] preempt and
/// args[3] prev_state both 0) resumes in user mode: remember that by pid,
/// for when it is switched in again.
fn remember_prev_resumes_in_user(a: &mut Asm, resumes_in_user: i32, task: &TaskLayout) {
    read_task(a, 1, task.pid);
    a.raw(STX_W, 10, 0, -24, 0);
    a.raw(MOV_K, 9, 0, 0, 0);
    a.raw(LDX_DW, 1, 6, 0, 0);
    a.raw(AND_K, 1, 0, 0, 1);
    a.jmp(JNE_K, 1, 0, 0, "prev_known");
    a.raw(LDX_DW, 1, 6, 24, 0);
    a.raw(MOV32_X, 1, 1, 0, 0);
    a.jmp(JNE_K, 1, 0, 0, "prev_known");
    a.raw(MOV_K, 9, 0, 0, 1);
    a.label("prev_known");
    a.raw(STX_DW, 10, 9, -32, 0);
    a.ld_map(1, resumes_in_user);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -24);
    a.raw(MOV_X, 3, 10, 0, 0);
    a.raw(ADD_K, 3, 0, 0, -32);
    a.raw(MOV_K, 4, 0, 0, 0); // BPF_ANY
    a.raw(CALL, 0, 0, 0, HELPER_UPDATE);
}

/// sched_switch, second part: the CPU's word for next (the idle loop, a
/// kernel thread, or in the system or user mode, of `tgid` or another).
fn charge_next(a: &mut Asm, resumes_in_user: i32, tgid: u32, task: &TaskLayout) {
    read_task(a, 2, task.pid);
    a.raw(ST_DW_K, 7, 0, 8, IDLE_LOOP);
    a.jmp(JEQ_K, 0, 0, 0, "out");
    a.raw(STX_W, 10, 0, -24, 0);
    read_task(a, 2, task.flags);
    a.raw(AND_X_K, 0, 0, 0, PF_KTHREAD);
    a.raw(ST_DW_K, 7, 0, 8, KTHREAD);
    a.jmp(JNE_K, 0, 0, 0, "out");
    // r9 = 1 if next resumes in user mode.
    a.raw(MOV_K, 9, 0, 0, 0);
    a.ld_map(1, resumes_in_user);
    a.raw(MOV_X, 2, 10, 0, 0);
    a.raw(ADD_K, 2, 0, 0, -24);
    a.raw(CALL, 0, 0, 0, HELPER_LOOKUP);
    a.jmp(JEQ_K, 0, 0, 0, "next_known");
    a.raw(LDX_DW, 9, 0, 0, 0);
    a.label("next_known");
    read_task(a, 2, task.tgid);
    a.jmp(JNE_K, 9, 0, 0, "to_user");
    a.raw(ST_DW_K, 7, 0, 8, SYS_OTHER);
    a.jmp(JNE_K, 0, 0, tgid as i32, "out");
    a.raw(ST_DW_K, 7, 0, 8, SYS_OURS);
    a.jmp(JEQ_K, 0, 0, 0, "out"); // always (r0 == 0 is not ours)
    a.label("to_user");
    a.raw(ST_DW_K, 7, 0, 8, USER_OTHER);
    a.jmp(JNE_K, 0, 0, tgid as i32, "out");
    a.raw(ST_DW_K, 7, 0, 8, USER_OURS);
}

/// One CPU's value as read from the map.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuWord {
    pub last_ns: u64,
    pub base: u64,
    pub hard_depth: u64,
    pub soft_depth: u64,
    /// The block phase outside interrupts (0, or a block state).
    pub phase: u64,
    /// The contexts in a request's completion (1 task, 2 softirq, 4 hardirq).
    pub completing: u64,
    pub acc: [u64; STATES.len()],
}

impl CpuWord {
    fn from_words(w: &[u64]) -> CpuWord {
        let mut acc = [0u64; STATES.len()];
        acc.copy_from_slice(&w[ACC..WORDS]);
        CpuWord {
            last_ns: w[0],
            base: w[1],
            hard_depth: w[2],
            soft_depth: w[3],
            phase: w[4],
            completing: w[5],
            acc,
        }
    }

    /// The state the CPU is in now (as the programs charge it).
    pub fn current(&self) -> usize {
        let (state, bit) = if self.hard_depth > 0 {
            (HARDIRQ as u64, 4)
        } else if self.soft_depth > 0 {
            (SOFTIRQ as u64, 2)
        } else if self.phase > 0 {
            (self.phase, 1)
        } else {
            (self.base, 1)
        };
        if self.completing & bit != 0 {
            COMPLETION as usize
        } else {
            (state as usize).min(STATES.len() - 1)
        }
    }

    /// The accumulators with the time since the last event (up to `now`,
    /// CLOCK_MONOTONIC ns) charged to the current state: as if an event had
    /// happened at `now`, so an idle CPU that saw no event for seconds is
    /// counted up to the moment of reading.
    pub fn settled(&self, now: u64) -> [u64; STATES.len()] {
        let mut acc = self.acc;
        if self.last_ns > 0 && now > self.last_ns {
            acc[self.current()] += now - self.last_ns;
        }
        acc
    }
}

/// Every CPU's states, settled at `now`, summed.
pub fn settle_all(cpus: &[CpuWord], now: u64) -> [u64; STATES.len()] {
    let mut t = [0u64; STATES.len()];
    for c in cpus {
        for (s, v) in t.iter_mut().zip(c.settled(now)) {
            *s += v;
        }
    }
    t
}

/// The loaded and attached programs; detached when dropped.
pub struct CpuStates {
    _links: Vec<Fd>,
    _progs: Vec<Fd>,
    map: Fd,
    _resumes: Fd,
    /// The optional tracepoints this kernel does not have (their time is
    /// charged to the state they interrupt).
    pub missing: Vec<String>,
    /// The tracepoints attached.
    pub attached: Vec<String>,
}

impl CpuStates {
    /// Load and attach the programs for this process (`tgid`), with the
    /// task-struct offsets from the kernel's BTF.
    pub fn start(tgid: u32, task: &TaskLayout) -> io::Result<CpuStates> {
        let map = map_create(6, 4, (WORDS * 8) as u32, 1, 0)?; // per-CPU array
        let resumes = map_create(9, 4, 8, TASKS, 0)?; // LRU hash: pid → 0/1
        let (mut links, mut progs, mut missing, mut attached) = (vec![], vec![], vec![], vec![]);
        for (tp, action, required) in EVENTS {
            if let Some(n) = needs(tp).filter(|n| missing.iter().any(|m| m == n)) {
                missing.push(format!("{tp} (not used without {n})"));
                continue;
            }
            let code = program(map.0, resumes.0, action, tgid, task);
            let name = format!("ssdr_{}", &tp[..tp.len().min(10)]);
            let p = prog_load(&code, &name, Attach::Raw(tp))
                .map_err(|e| io::Error::new(e.kind(), format!("loading {tp}: {e}")))?;
            match attach(&p, Attach::Raw(tp)) {
                Ok(l) => {
                    links.push(l);
                    progs.push(p);
                    attached.push(tp.to_string());
                }
                Err(_) if !required => missing.push(tp.to_string()),
                Err(e) => return Err(io::Error::new(e.kind(), format!("attaching to {tp}: {e}"))),
            }
        }
        Ok(CpuStates {
            _links: links,
            _progs: progs,
            map,
            _resumes: resumes,
            missing,
            attached,
        })
    }

    /// Every possible CPU's value now.
    pub fn read(&self) -> io::Result<Vec<CpuWord>> {
        let cpus = possible_cpus();
        let mut vals = vec![0u64; cpus * WORDS];
        let key = 0u32;
        let mut a = [0u64; 16];
        a[0] = self.map.0 as u64;
        a[1] = &key as *const u32 as u64;
        a[2] = vals.as_mut_ptr() as u64;
        super::bpf(1, &mut a)?; // BPF_MAP_LOOKUP_ELEM
        Ok(vals.chunks(WORDS).map(CpuWord::from_words).collect())
    }

    /// Each possible CPU's states, settled at the moment of reading, and
    /// that moment (CLOCK_MONOTONIC, ns): the time two snapshots' states
    /// must add up to on each CPU is the difference of their moments.
    pub fn snapshot(&self) -> io::Result<(u64, Vec<[u64; STATES.len()]>)> {
        let v = self.read()?;
        let now = super::monotonic_ns();
        Ok((now, v.iter().map(|c| c.settled(now)).collect()))
    }
}

/// Make every online CPU pass through `sched_switch` (the calling thread
/// visits each in turn), so that each has a known state before a window
/// opens; the thread's CPU affinity is put back.
pub fn visit_every_cpu() {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity/setaffinity read
    // and write one we own, for the calling thread (pid 0).
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        let sz = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, sz, &mut old) != 0 {
            return;
        }
        let n = libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as usize;
        for cpu in 0..n.min(libc::CPU_SETSIZE as usize) {
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, sz, &one) == 0 {
                libc::sched_yield();
            }
        }
        libc::sched_setaffinity(0, sz, &old);
    }
}

/// The state index of `unknown` and of the idle state, for callers
/// that group states.
pub const UNKNOWN_STATE: usize = UNKNOWN as usize;
/// Only the halted state is idle as /proc/stat counts it: measured on a
/// KVM guest (docs/measurement.md), /proc/stat counts the idle loop's time
/// outside the halt as busy.
pub const IDLE_STATES: [usize; 1] = [IDLE as usize];

#[cfg(test)]
mod tests {
    use super::*;

    fn word(base: i32, hard: u64, soft: u64, last: u64) -> CpuWord {
        CpuWord {
            last_ns: last,
            base: base as u64,
            hard_depth: hard,
            soft_depth: soft,
            phase: 0,
            completing: 0,
            acc: [0; STATES.len()],
        }
    }

    #[test]
    fn the_block_phase_and_a_completion_take_their_context_s_time() {
        // A system call inside the block layer: block submission.
        let mut w = word(SYS_OURS, 0, 0, 1_000);
        w.phase = BLOCK_SUBMIT as u64;
        assert_eq!(w.settled(1_400)[BLOCK_SUBMIT as usize], 400);
        // An interrupt on top of it is the interrupt's.
        w.hard_depth = 1;
        assert_eq!(w.settled(1_400)[HARDIRQ as usize], 400);
        // A completion begun in the softirq: block completion while in it,
        // but not in a hard interrupt on top of it.
        let mut w = word(KTHREAD, 0, 1, 1_000);
        w.completing = 2;
        assert_eq!(w.settled(1_100)[COMPLETION as usize], 100);
        w.hard_depth = 1;
        assert_eq!(w.settled(1_100)[HARDIRQ as usize], 100);
        // One begun in the task context does not cover the softirq.
        let mut w = word(KTHREAD, 0, 1, 1_000);
        w.completing = 1;
        assert_eq!(w.settled(1_100)[SOFTIRQ as usize], 100);
        w.soft_depth = 0;
        assert_eq!(w.settled(1_100)[COMPLETION as usize], 100);
    }

    #[test]
    fn a_block_event_is_used_only_with_its_pair() {
        for (tp, _, required) in EVENTS {
            if let Some(n) = needs(tp) {
                assert!(!required);
                let at = |t: &str| EVENTS.iter().position(|e| e.0 == t).unwrap();
                // The one needed attaches first.
                assert!(at(n) < at(tp), "{tp} before {n}");
            }
        }
    }

    #[test]
    fn the_time_since_the_last_event_goes_to_the_current_state() {
        // An interrupt inside a system call: hardirq, whatever the base.
        let w = word(SYS_OURS, 1, 1, 1_000);
        assert_eq!(w.settled(1_500)[HARDIRQ as usize], 500);
        // A softirq alone.
        assert_eq!(
            word(KTHREAD, 0, 1, 1_000).settled(1_300)[SOFTIRQ as usize],
            300
        );
        // A halted CPU that saw no event: counted to the moment of reading.
        let mut w = word(IDLE, 0, 0, 1_000);
        w.acc[IDLE as usize] = 7;
        assert_eq!(w.settled(3_000_001_000)[IDLE as usize], 3_000_000_007);
        // No event yet: nothing charged; a clock read before the last event: nothing.
        assert_eq!(word(UNKNOWN, 0, 0, 0).settled(5_000), [0; STATES.len()]);
        assert_eq!(word(IDLE, 0, 0, 9_000).settled(5_000), [0; STATES.len()]);
    }

    #[test]
    fn every_cpu_adds_up_to_the_window() {
        let mut a = word(IDLE, 0, 0, 2_000);
        a.acc[USER_OURS as usize] = 1_000;
        a.acc[SYS_OURS as usize] = 1_000;
        let mut b = word(USER_OTHER, 0, 0, 3_000);
        b.acc[IDLE as usize] = 3_000;
        let t = settle_all(&[a, b], 4_000);
        assert_eq!(t.iter().sum::<u64>(), 2 * 4_000);
        assert_eq!(t[IDLE as usize], 2_000 + 3_000);
        assert_eq!(t[USER_OTHER as usize], 1_000);
    }

    /// The verifier accepts every program (offsets are only read through
    /// bpf_probe_read_kernel, so made-up ones are safe), and the block
    /// tracepoints this kernel has are used.
    #[test]
    fn the_programs_load_where_permitted() {
        let task = TaskLayout {
            flags: 44,
            pid: 1000,
            tgid: 1004,
        };
        match CpuStates::start(std::process::id(), &task) {
            Ok(s) => {
                eprintln!("attached {:?}, missing {:?}", s.attached, s.missing);
                let has = std::path::Path::new("/sys/kernel/tracing/events/block/block_rq_issue")
                    .exists();
                if has {
                    assert!(s.attached.iter().any(|t| t == "block_rq_issue"));
                    assert!(s.attached.iter().any(|t| t == "block_bio_queue"));
                }
                assert_eq!(s.read().unwrap().len(), possible_cpus());
            }
            Err(e) => eprintln!("skipped: eBPF not permitted here: {e}"),
        }
    }

    #[test]
    fn the_programs_assemble_with_every_jump_resolved() {
        let task = TaskLayout {
            flags: 44,
            pid: 1000,
            tgid: 1004,
        };
        for (_, action, _) in EVENTS {
            let code = program(3, 4, action, 42, &task);
            assert!(code.len() > 20 && code.len() < 200, "{action:?}");
            // The last instruction is exit.
            assert_eq!(code.last().unwrap() & 0xff, EXIT as u64);
        }
    }
}
