//! Running one command: confined to the workspace, bounded in time and output, killed as a
//! whole process group when it overruns or the build is cancelled.

use crate::leash::Leash;
use crate::memwatch::{TreeMemory, Watch, kill_pids};
use crate::output::CappedOutput;
use crate::spec::{CommandSpec, Isolation, NoIsolation, RunError, find_program};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// How often a [`CommandSpec::memory_watch`] measures: a page allocating as fast as it can
/// (about 1 GB/s on one core) gets past the limit by a few hundred MB at most.
pub const MEMORY_POLL: Duration = Duration::from_millis(100);

/// Live output held back for the interval is forwarded at once when it reaches this size.
const LIVE_BATCH: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    Stdout,
    Stderr,
}

/// Receives output while the command runs (for live `command_output` events).
pub trait OutputSink: Send + Sync {
    fn output(&self, stream: StreamKind, chunk: &str);
}

impl OutputSink for () {
    fn output(&self, _: StreamKind, _: &str) {}
}

/// How a command ended.
#[derive(Debug, Clone)]
pub struct CommandOutcome {
    /// `None` when killed by a signal (timeout, cancel, crash).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub stdout: CappedOutput,
    pub stderr: CappedOutput,
    pub duration: Duration,
    /// The most memory the command's processes held together, when it was watched.
    pub peak_memory: Option<u64>,
    /// Set when its [`CommandSpec::memory_watch`] stopped it: what its processes held then.
    pub memory_exceeded: Option<TreeMemory>,
}

impl CommandOutcome {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled && self.memory_exceeded.is_none()
    }
}

/// Runs commands; the one seam every caller (tools, verification) goes through.
#[async_trait::async_trait]
pub trait CommandRunner: Send + Sync {
    async fn run(
        &self,
        spec: CommandSpec,
        sink: &dyn OutputSink,
        cancel: &CancellationToken,
    ) -> Result<CommandOutcome, RunError>;

    /// Whether what this runner starts is confined by an isolation layer (a program may then
    /// switch off a sandbox of its own, as Chromium must as the sandbox's unprivileged user).
    fn confines(&self) -> bool {
        false
    }

    /// Whether what this runner starts can listen and connect on loopback TCP.
    fn loopback_tcp(&self) -> bool {
        true
    }

    /// Whether the run this runner serves is past its lease ([`Leash::expired`]): then no tool
    /// of the run may act any more (its build is another run's now). Never, without a lease.
    fn past_lease(&self) -> bool {
        false
    }
}

/// The real runner: child processes in their own process group.
pub struct ProcessRunner {
    isolation: Box<dyn Isolation>,
    /// Commands of a run held by a lease are started through its [`Leash`], which kills them
    /// when the lease is not renewed in time even if wright itself is frozen.
    leash: Option<Leash>,
}

impl Default for ProcessRunner {
    fn default() -> Self {
        Self::new(Box::new(NoIsolation))
    }
}

impl ProcessRunner {
    pub fn new(isolation: Box<dyn Isolation>) -> Self {
        Self { isolation, leash: None }
    }

    /// Start every command through `leash` (see [`Leash`]).
    pub fn with_leash(mut self, leash: Option<Leash>) -> Self {
        self.leash = leash;
        self
    }
}

/// Start `spec` (already wrapped by its isolation) as a child in a process group of its own,
/// with exactly its environment, stdout and stderr piped, killed if its handle is dropped.
pub(crate) fn spawn(spec: &CommandSpec, stdin: Stdio) -> Result<tokio::process::Child, RunError> {
    let program =
        find_program(&spec.program, &spec.env).ok_or_else(|| RunError::NotFound { program: spec.program.clone() })?;
    tokio::process::Command::new(&program)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => RunError::NotFound { program: spec.program.clone() },
            _ => RunError::Spawn { program: spec.program.clone(), message: e.to_string() },
        })
}

/// Kill every process in the group. The group outlives its leader, so this also reaps helpers
/// a command left behind in the background.
fn kill_group(pgid: u32) {
    if let Ok(pid) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}

/// Kills a process group when dropped while armed.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            kill_group(pgid);
        }
    }
}

#[async_trait::async_trait]
impl CommandRunner for ProcessRunner {
    fn confines(&self) -> bool {
        self.isolation.name() != "none"
    }

    fn loopback_tcp(&self) -> bool {
        self.isolation.loopback_tcp()
    }

    fn past_lease(&self) -> bool {
        self.leash.as_ref().is_some_and(Leash::expired)
    }

    async fn run(
        &self,
        spec: CommandSpec,
        sink: &dyn OutputSink,
        cancel: &CancellationToken,
    ) -> Result<CommandOutcome, RunError> {
        let mut spec = self.isolation.wrap(spec)?;
        if let Some(leash) = &self.leash {
            spec = leash.wrap(spec)?;
        }
        let started = Instant::now();
        let mut child = spawn(&spec, Stdio::null())?;
        // The child has its copies; wright's go now.
        drop(std::mem::take(&mut spec.inherit));
        let pgid = child.id().unwrap_or(0);
        // If this future is dropped half-way (a caller's timeout, a cancelled task), the whole
        // group still goes, not only the direct child.
        let mut guard = GroupGuard(Some(pgid));
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();

        let (tx, mut rx) = tokio::sync::mpsc::channel::<(StreamKind, Vec<u8>)>(64);
        let readers = [
            stdout.map(|s| tokio::spawn(pump(Box::new(s), StreamKind::Stdout, tx.clone()))),
            stderr.map(|s| tokio::spawn(pump(Box::new(s), StreamKind::Stderr, tx.clone()))),
        ];
        drop(tx);

        let mut out = Collector::new(&spec, sink);
        let deadline = tokio::time::sleep(spec.timeout);
        tokio::pin!(deadline);
        // When held-back live output is due; armed while some is held.
        let due = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(due);
        let mut held = false;
        let mut timed_out = false;
        let mut cancelled = false;
        let mut status = None;
        let mut watch = spec.memory_watch.map(|limit| Watch::new(limit, child.id()));
        let mut poll = tokio::time::interval(MEMORY_POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // Drive output and the exit together so a chatty child never blocks on a full pipe.
        loop {
            tokio::select! {
                chunk = rx.recv() => match chunk {
                    Some((kind, bytes)) => {
                        out.push(kind, &bytes);
                        if out.holding() && !held {
                            held = true;
                            due.as_mut().reset(tokio::time::Instant::now() + spec.live_interval);
                        }
                        held &= out.holding();
                    }
                    None => if status.is_some() { break } else {
                        // Pipes closed; only the exit is left to wait for. Nothing more can
                        // arrive, so what is held goes out now rather than at the exit.
                        out.forward();
                        tokio::select! {
                            s = child.wait() => { status = s.ok(); break }
                            _ = &mut deadline => { timed_out = true; break }
                            _ = cancel.cancelled() => { cancelled = true; break }
                            // Closing its output does not take a command out of the watch.
                            _ = poll.tick(), if watch.is_some() => {
                                if let Some(w) = watch.as_mut() {
                                    if w.measure().await {
                                        break;
                                    }
                                }
                            }
                        }
                    },
                },
                s = child.wait(), if status.is_none() => {
                    status = s.ok();
                    // The leader is gone; anything it left in its group goes too, which also
                    // closes pipes held by background grandchildren.
                    kill_group(pgid);
                }
                _ = &mut due, if held => { out.forward(); held = false; }
                _ = poll.tick(), if status.is_none() && watch.is_some() => {
                    if let Some(w) = watch.as_mut() {
                        if w.measure().await {
                            break;
                        }
                    }
                }
                _ = &mut deadline, if status.is_none() => { timed_out = true; break }
                _ = cancel.cancelled(), if status.is_none() => { cancelled = true; break }
            }
        }
        let memory_exceeded = watch.as_mut().and_then(|w| w.exceeded.take());
        if timed_out || cancelled || memory_exceeded.is_some() {
            if let Some(m) = &memory_exceeded {
                // Whatever left the group (a sandbox's own session) goes by its pid.
                kill_pids(&m.pids);
            }
            kill_group(pgid);
            let _ = child.kill().await;
            status = None;
        }
        // Drain what is still buffered, briefly: the group is dead, pipes close promptly.
        let drain = async {
            while let Some((kind, bytes)) = rx.recv().await {
                out.push(kind, &bytes);
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
        for r in readers.into_iter().flatten() {
            r.abort();
        }
        guard.0 = None;
        let (stdout, stderr) = out.finish();
        Ok(CommandOutcome {
            exit_code: status.and_then(|s| s.code()),
            timed_out,
            cancelled,
            stdout,
            stderr,
            duration: started.elapsed(),
            peak_memory: watch.map(|w| w.peak),
            memory_exceeded,
        })
    }
}

async fn pump(
    mut r: Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    kind: StreamKind,
    tx: tokio::sync::mpsc::Sender<(StreamKind, Vec<u8>)>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send((kind, buf[..n].to_vec())).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Per-stream capture plus live forwarding with a byte budget, UTF-8 boundary care and
/// batching (text is held back until [`forward`](Collector::forward), a full batch, or output
/// on the other stream, so the two streams' order is kept).
struct Collector<'a> {
    sink: &'a dyn OutputSink,
    limit: u64,
    /// Forward every read at once (no batching).
    eager: bool,
    streams: [StreamState; 2],
}

struct StreamState {
    capture: CappedOutput,
    forwarded: u64,
    carry: Vec<u8>,
    /// Complete text not yet handed to the sink.
    pending: String,
    announced_cut: bool,
}

impl<'a> Collector<'a> {
    fn new(spec: &CommandSpec, sink: &'a dyn OutputSink) -> Self {
        let mk = || StreamState {
            capture: CappedOutput::new(spec.capture_head, spec.capture_tail),
            forwarded: 0,
            carry: Vec::new(),
            pending: String::new(),
            announced_cut: false,
        };
        Self { sink, limit: spec.stream_limit, eager: spec.live_interval.is_zero(), streams: [mk(), mk()] }
    }

    /// Whether some text waits to be forwarded.
    fn holding(&self) -> bool {
        self.streams.iter().any(|s| !s.pending.is_empty())
    }

    /// Hand everything held back to the sink.
    fn forward(&mut self) {
        for kind in [StreamKind::Stdout, StreamKind::Stderr] {
            self.forward_one(kind);
        }
    }

    fn forward_one(&mut self, kind: StreamKind) {
        let st = &mut self.streams[kind as usize];
        if !st.pending.is_empty() {
            let text = std::mem::take(&mut st.pending);
            self.sink.output(kind, &text);
        }
    }

    fn push(&mut self, kind: StreamKind, bytes: &[u8]) {
        // Output on one stream first sends what the other holds: the order is kept.
        let other = if kind == StreamKind::Stdout { StreamKind::Stderr } else { StreamKind::Stdout };
        self.forward_one(other);
        let st = &mut self.streams[kind as usize];
        st.capture.push(bytes);
        if st.forwarded >= self.limit {
            if !st.announced_cut {
                st.announced_cut = true;
                self.forward_one(kind);
                self.sink
                    .output(kind, "\n… [live output stopped here; the rest is summarised when the command ends] …\n");
            }
            return;
        }
        st.forwarded += bytes.len() as u64;
        st.carry.extend_from_slice(bytes);
        // Forward complete UTF-8 only; hold back a split character for the next chunk.
        let valid = match std::str::from_utf8(&st.carry) {
            Ok(_) => st.carry.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => st.carry.len(),
        };
        if valid > 0 {
            st.pending.push_str(&String::from_utf8_lossy(&st.carry[..valid]));
            st.carry.drain(..valid);
            if self.eager || st.pending.len() >= LIVE_BATCH {
                self.forward_one(kind);
            }
        }
    }

    fn finish(mut self) -> (CappedOutput, CappedOutput) {
        self.forward();
        for (i, st) in self.streams.iter().enumerate() {
            if !st.carry.is_empty() && !st.announced_cut {
                let kind = if i == 0 { StreamKind::Stdout } else { StreamKind::Stderr };
                self.sink.output(kind, &String::from_utf8_lossy(&st.carry));
            }
        }
        let [a, b] = self.streams;
        (a.capture, b.capture)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Rec(Mutex<String>);
    impl OutputSink for Rec {
        fn output(&self, _: StreamKind, chunk: &str) {
            self.0.lock().unwrap().push_str(chunk);
        }
    }

    fn env() -> Vec<(String, String)> {
        vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]
    }

    fn spec(args: &[&str]) -> CommandSpec {
        CommandSpec::new("sh", vec!["-c".into(), args.join(" ")], std::env::temp_dir(), env())
    }

    #[tokio::test]
    async fn captures_exit_and_output() {
        let rec = Rec::default();
        let o = ProcessRunner::default()
            .run(spec(&["echo out; echo err >&2; exit 3"]), &rec, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.stdout.render(), "out\n");
        assert_eq!(o.stderr.render(), "err\n");
        assert!(rec.0.lock().unwrap().contains("out"));
    }

    /// Every call the sink got, in order.
    #[derive(Default)]
    struct Calls(Mutex<Vec<(StreamKind, String)>>);
    impl OutputSink for Calls {
        fn output(&self, kind: StreamKind, chunk: &str) {
            self.0.lock().unwrap().push((kind, chunk.to_string()));
        }
    }

    #[tokio::test]
    async fn chatty_output_is_forwarded_in_batches_complete_and_in_order() {
        let calls = Calls::default();
        let script = "i=0; while [ $i -lt 60 ]; do echo \"line $i\"; i=$((i+1)); sleep 0.005; done; echo last >&2";
        let o = ProcessRunner::default().run(spec(&[script]), &calls, &CancellationToken::new()).await.unwrap();
        assert_eq!(o.exit_code, Some(0));
        let calls = calls.0.into_inner().unwrap();
        let stdout: String = calls.iter().filter(|c| c.0 == StreamKind::Stdout).map(|c| c.1.as_str()).collect();
        let expected: String = (0..60).map(|i| format!("line {i}\n")).collect();
        assert_eq!(stdout, expected, "every line, once, in order");
        assert_eq!(calls.last().map(|c| (c.0, c.1.as_str())), Some((StreamKind::Stderr, "last\n")));
        // 60 lines over at least 300 ms, forwarded at most every 50 ms: far fewer calls than lines.
        assert!(calls.len() < 30, "{} calls for 60 lines", calls.len());
    }

    #[tokio::test]
    async fn zero_interval_forwards_each_read_and_streams_keep_their_order() {
        let calls = Calls::default();
        let mut s = spec(&["echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c"]);
        s.live_interval = Duration::ZERO;
        ProcessRunner::default().run(s, &calls, &CancellationToken::new()).await.unwrap();
        let calls = calls.0.into_inner().unwrap();
        let seen: Vec<(StreamKind, &str)> = calls.iter().map(|c| (c.0, c.1.as_str())).collect();
        assert_eq!(seen, [(StreamKind::Stdout, "a\n"), (StreamKind::Stderr, "b\n"), (StreamKind::Stdout, "c\n")]);
    }

    #[tokio::test]
    async fn batched_streams_keep_their_order_too() {
        let calls = Calls::default();
        ProcessRunner::default()
            .run(spec(&["echo a; sleep 0.02; echo b >&2; sleep 0.02; echo c"]), &calls, &CancellationToken::new())
            .await
            .unwrap();
        let calls = calls.0.into_inner().unwrap();
        let seen: Vec<(StreamKind, &str)> = calls.iter().map(|c| (c.0, c.1.as_str())).collect();
        // `a` is still held when `b` arrives on the other stream: it goes first.
        assert_eq!(seen, [(StreamKind::Stdout, "a\n"), (StreamKind::Stderr, "b\n"), (StreamKind::Stdout, "c\n")]);
    }

    #[tokio::test]
    async fn environment_is_cleared_and_stdin_closed() {
        // SAFETY: test-only; no other thread of this test reads the variable.
        unsafe { std::env::set_var("WRIGHT_TEST_SECRET", "sk-123") };
        let o = ProcessRunner::default().run(spec(&["env; cat"]), &(), &CancellationToken::new()).await.unwrap();
        let out = o.stdout.render();
        assert!(!out.contains("sk-123"), "{out}");
        assert!(out.contains("PATH="));
        assert_eq!(o.exit_code, Some(0));
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group_including_background_children() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("alive");
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let mut s = spec(&[&script]);
        s.timeout = Duration::from_millis(300);
        let o = ProcessRunner::default().run(s, &(), &CancellationToken::new()).await.unwrap();
        assert!(o.timed_out);
        assert_eq!(o.exit_code, None);
        assert!(o.duration < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(!marker.exists(), "background child survived the timeout");
    }

    #[tokio::test]
    async fn background_child_holding_the_pipe_does_not_hang_the_command() {
        let o = ProcessRunner::default()
            .run(spec(&["sleep 30 & echo started"]), &(), &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(o.exit_code, Some(0));
        assert!(o.duration < Duration::from_secs(10));
    }

    #[tokio::test]
    async fn cancel_stops_the_command() {
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            c2.cancel();
        });
        let o = ProcessRunner::default().run(spec(&["sleep 30"]), &(), &cancel).await.unwrap();
        assert!(o.cancelled);
        assert!(!o.success());
    }

    #[tokio::test]
    async fn output_is_capped_and_live_stream_bounded() {
        let rec = Rec::default();
        let mut s = spec(&["head -c 3000000 /dev/zero | tr '\\0' a"]);
        s.stream_limit = 100_000;
        let o = ProcessRunner::default().run(s, &rec, &CancellationToken::new()).await.unwrap();
        assert_eq!(o.stdout.total(), 3_000_000);
        assert!(o.stdout.render().len() < 40 * 1024);
        assert!(o.stdout.render().contains("bytes of output cut"));
        let live = rec.0.lock().unwrap().len();
        assert!(live < 200_000, "{live}");
    }

    #[tokio::test]
    async fn missing_program_is_a_clear_error() {
        let s = CommandSpec::new("definitely-not-a-program", vec![], std::env::temp_dir(), env());
        let e = ProcessRunner::default().run(s, &(), &CancellationToken::new()).await.unwrap_err();
        assert!(e.to_string().contains("was not found"));
    }
}

/// The memory watch ([`crate::memwatch`]) as the runner uses it: a command whose processes
/// together hold too much is stopped.
#[cfg(test)]
mod memory_watch_tests {
    use super::*;

    fn sh(script: &str) -> crate::CommandSpec {
        let env = vec![("PATH".to_string(), "/usr/local/bin:/usr/bin:/bin".to_string())];
        crate::CommandSpec::new("sh", vec!["-c".into(), script.into()], std::env::temp_dir(), env)
    }

    #[tokio::test]
    async fn a_watched_command_is_stopped_when_its_processes_together_hold_too_much() {
        // Two children, each growing by 16 MiB every 50 ms (and touching it): neither alone
        // would have to be big for the two together to pass the limit.
        let grow = "perl -e '$x .= \"a\" x (16 << 20), select(undef, undef, undef, 0.05) while 1'";
        let mut s = sh(&format!("{grow} & {grow} & wait"));
        s.memory_watch = Some(256 << 20);
        s.timeout = Duration::from_secs(60);
        let o = ProcessRunner::default().run(s, &(), &CancellationToken::new()).await.unwrap();
        let m = o.memory_exceeded.clone().expect("stopped for its memory");
        assert!(m.total > 256 << 20, "{m:?}");
        assert!(m.pids.len() >= 3, "the shell and both children were counted: {m:?}");
        assert!(m.largest.as_ref().is_some_and(|l| l.command.starts_with("perl")), "{m:?}");
        assert!(!o.success() && !o.timed_out);
        assert!(o.duration < Duration::from_secs(30), "{:?}", o.duration);
        assert!(o.peak_memory.is_some_and(|p| p >= m.total));
        // Nothing of it is left.
        tokio::time::sleep(Duration::from_millis(200)).await;
        for pid in &m.pids {
            assert!(!std::path::Path::new(&format!("/proc/{pid}/status")).exists() || zombie(*pid), "{pid} lives on");
        }
    }

    #[tokio::test]
    async fn a_watched_command_that_closes_its_output_is_still_watched() {
        let grow = "perl -e '$x .= \"a\" x (16 << 20), select(undef, undef, undef, 0.05) while 1'";
        let mut s = sh(&format!("exec > /dev/null 2>&1; {grow}"));
        s.memory_watch = Some(128 << 20);
        s.timeout = Duration::from_secs(60);
        let o = ProcessRunner::default().run(s, &(), &CancellationToken::new()).await.unwrap();
        assert!(o.memory_exceeded.is_some_and(|m| m.total > 128 << 20), "{:?}", o.duration);
        assert!(o.duration < Duration::from_secs(30), "{:?}", o.duration);
    }

    fn zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')))
    }
}
