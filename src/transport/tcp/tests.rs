//! Transports of one process talking over 127.0.0.1, polled in turn from
//! one thread.
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::time::{Duration, Instant};

use super::handshake::{Credentials, HELLO_LEN};
use super::*;
use crate::transport::{EpochTag, Placement, PLACE_HEAD};

const JOB: &str = "job-tcp-test";
const SECRET: &str = "correct horse battery staple";
const PATIENCE: Duration = Duration::from_secs(30);

fn transport(me: ProcessId, epoch: u64) -> TcpTransport {
    let epoch = EpochTag::new(epoch);
    TcpTransport::new(me, epoch, JOB, SECRET, IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap()
}

/// `n` transports (ranks 0..n, epoch 1) that know where the others listen.
fn mesh(n: u32) -> Vec<TcpTransport> {
    let mut ts: Vec<TcpTransport> = (0..n).map(|r| transport(r, 1)).collect();
    let addrs: Vec<SocketAddr> = ts.iter().map(|t| t.local_addr()).collect();
    for t in &mut ts {
        for (peer, addr) in addrs.iter().enumerate() {
            if peer as u32 != t.me() {
                t.connect_peer(peer as u32, *addr);
            }
        }
    }
    ts
}

/// A frame naming its sender, receiver and sequence number, `len` bytes
/// long (at least 12).
fn frame(from: ProcessId, to: ProcessId, seq: u32, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len)
        .map(|i| (i as u32 ^ seq.wrapping_mul(2_654_435_761)) as u8)
        .collect();
    f[..4].copy_from_slice(&from.to_le_bytes());
    f[4..8].copy_from_slice(&to.to_le_bytes());
    f[8..12].copy_from_slice(&seq.to_le_bytes());
    f
}

fn send(t: &mut TcpTransport, dest: ProcessId, bytes: &[u8]) -> bool {
    t.try_send(dest, bytes.len(), &mut |out: &mut [u8]| {
        out.copy_from_slice(bytes)
    })
}

/// Frames each transport received: (sender, frame).
type Inboxes = Vec<Vec<(ProcessId, Vec<u8>)>>;

fn poll_all(ts: &mut [TcpTransport], inboxes: &mut Inboxes) {
    for (t, inbox) in ts.iter_mut().zip(inboxes.iter_mut()) {
        t.poll(&mut |from, f: &[u8]| inbox.push((from, f.to_vec())));
    }
}

/// Polls everyone until `done` holds (panics after `PATIENCE`).
fn poll_until(
    ts: &mut [TcpTransport],
    inboxes: &mut Inboxes,
    what: &str,
    mut done: impl FnMut(&[TcpTransport], &Inboxes) -> bool,
) {
    let start = Instant::now();
    while !done(ts, inboxes) {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        poll_all(ts, inboxes);
    }
}

/// Polls everyone until `from` has a connection to `to` (no frame sent).
fn connect(ts: &mut [TcpTransport], inboxes: &mut Inboxes, from: u32, to: u32) {
    let start = Instant::now();
    while !ts[from as usize].is_connected(to) {
        assert!(
            start.elapsed() < PATIENCE,
            "timed out connecting {from} -> {to}"
        );
        assert!(!send(&mut ts[from as usize], to, &[0; 12]));
        poll_all(ts, inboxes);
    }
}

/// Sends `queues[(from, to)]` in order while polling everyone, until every
/// frame has arrived; checks that each pair's frames came whole and in
/// order.
fn exchange(ts: &mut [TcpTransport], mut queues: HashMap<(u32, u32), VecDeque<Vec<u8>>>) {
    let expected = queues.clone();
    let mut inboxes: Inboxes = vec![Vec::new(); ts.len()];
    let total: usize = queues.values().map(VecDeque::len).sum();
    let start = Instant::now();
    while inboxes.iter().map(Vec::len).sum::<usize>() < total {
        assert!(start.elapsed() < PATIENCE, "timed out exchanging frames");
        for ((from, to), queue) in queues.iter_mut() {
            while let Some(f) = queue.front() {
                if !send(&mut ts[*from as usize], *to, f) {
                    break;
                }
                queue.pop_front();
            }
        }
        poll_all(ts, &mut inboxes);
    }
    for (to, inbox) in inboxes.iter().enumerate() {
        for from in 0..ts.len() as u32 {
            let got: Vec<&Vec<u8>> = inbox
                .iter()
                .filter(|(f, _)| *f == from)
                .map(|(_, bytes)| bytes)
                .collect();
            let want: Vec<&Vec<u8>> = expected
                .get(&(from, to as u32))
                .map(|q| q.iter().collect())
                .unwrap_or_default();
            assert_eq!(got.len(), want.len(), "frame count {from} -> {to}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(g == w, "frame {i} from {from} to {to} differs");
            }
        }
    }
}

fn all_to_all(n: u32, frames: u32, sizes: &[usize]) -> HashMap<(u32, u32), VecDeque<Vec<u8>>> {
    let mut queues = HashMap::new();
    for from in 0..n {
        for to in (0..n).filter(|&to| to != from) {
            let q = (0..frames)
                .map(|seq| {
                    let len = sizes[(seq + from * 3 + to) as usize % sizes.len()];
                    frame(from, to, seq, len)
                })
                .collect();
            queues.insert((from, to), q);
        }
    }
    queues
}

#[test]
fn three_processes_exchange_frames_of_mixed_sizes_in_order() {
    let mut ts = mesh(3);
    let sizes = [12, 13, 1000, 64 * 1024, MAX_FRAME, 12_345, 100_000, 40];
    exchange(&mut ts, all_to_all(3, 150, &sizes));
    for t in &ts {
        assert_eq!(t.connection_count(), 2, "process {}", t.me());
    }
}

#[test]
fn simultaneous_connects_leave_one_connection_per_pair() {
    for round in 0..20 {
        let mut ts = mesh(4);
        // Everyone starts connecting to everyone before anyone polls.
        for t in &mut ts {
            let me = t.me();
            for peer in (0..4).filter(|&p| p != me) {
                assert!(!send(t, peer, &frame(me, peer, 0, 12)));
            }
        }
        // One process polls ahead of the others, a different one and for
        // longer each round.
        for _ in 0..round {
            ts[round % 4].poll(&mut |_, _: &[u8]| panic!("no frame was sent yet"));
        }
        exchange(&mut ts, all_to_all(4, 30, &[12, 5000, 70_000]));
        for t in &ts {
            assert_eq!(t.connection_count(), 3, "round {round}, process {}", t.me());
            assert_eq!(
                t.connections.iter().count(),
                3,
                "round {round}: stray attempts remain"
            );
        }
    }
}

/// A client socket that is not a transport, for stray connections.
struct Stray {
    socket: TcpStream,
    what: &'static str,
}

impl Stray {
    fn connect(t: &TcpTransport, what: &'static str, first_bytes: &[u8]) -> Stray {
        let mut socket = TcpStream::connect(t.local_addr()).unwrap();
        socket.write_all(first_bytes).unwrap();
        socket.set_nonblocking(true).unwrap();
        Stray { socket, what }
    }

    /// Whether the transport closed it; panics if it sent anything.
    fn closed(&mut self) -> bool {
        let mut buf = [0u8; 256];
        match self.socket.read(&mut buf) {
            Ok(0) => true,
            Ok(n) => panic!("stray '{}' received {n} bytes", self.what),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(_) => true, // reset
        }
    }
}

fn hello_from(job: &str, epoch: u64, secret: &str, from: u32, to: u32) -> Vec<u8> {
    Credentials::new(job, EpochTag::new(epoch), secret)
        .unwrap()
        .hello(from, to)
        .to_vec()
}

#[test]
fn stray_connections_are_dropped_without_disturbing_the_job() {
    let mut ts = mesh(2);
    ts[1].set_handshake_timeout(Duration::from_millis(300));
    let mut inboxes: Inboxes = vec![Vec::new(); 2];
    // A connection between the real processes first.
    connect(&mut ts, &mut inboxes, 0, 1);

    let good = hello_from(JOB, 1, SECRET, 0, 1);
    let mut strays = vec![
        Stray::connect(&ts[1], "wrong secret", &hello_from(JOB, 1, "guess", 0, 1)),
        Stray::connect(&ts[1], "garbage", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Stray::connect(&ts[1], "binary garbage", &[0u8; 4096]),
        Stray::connect(
            &ts[1],
            "other job",
            &hello_from("job-other", 1, SECRET, 0, 1),
        ),
        Stray::connect(&ts[1], "other epoch", &hello_from(JOB, 2, SECRET, 0, 1)),
        Stray::connect(
            &ts[1],
            "meant for another",
            &hello_from(JOB, 1, SECRET, 0, 5),
        ),
        Stray::connect(
            &ts[1],
            "claims to be its receiver",
            &hello_from(JOB, 1, SECRET, 1, 1),
        ),
        Stray::connect(&ts[1], "duplicate of a live peer", &good),
        Stray::connect(&ts[1], "half a hello, stalled", &good[..HELLO_LEN / 2]),
        Stray::connect(&ts[1], "hello and a frame, wrong secret", &{
            let mut b = hello_from(JOB, 1, "guess", 0, 1);
            b.extend_from_slice(&8u32.to_le_bytes());
            b.extend_from_slice(b"injected");
            b
        }),
    ];
    // Half a hello, then the connection closes.
    drop(TcpStream::connect(ts[1].local_addr()).and_then(|mut s| s.write_all(&good[..30])));
    // Connected, then silent.
    let silent = TcpStream::connect(ts[1].local_addr()).unwrap();

    // Real traffic both ways while the strays are dealt with.
    let mut queues = all_to_all(2, 400, &[12, 3000, MAX_FRAME]);
    let start = Instant::now();
    let total = 800;
    while inboxes[0].len() + inboxes[1].len() < total {
        assert!(start.elapsed() < PATIENCE, "timed out");
        for ((from, to), queue) in queues.iter_mut() {
            if let Some(f) = queue.front() {
                if send(&mut ts[*from as usize], *to, f) {
                    queue.pop_front();
                }
            }
        }
        poll_all(&mut ts, &mut inboxes);
    }
    poll_until(&mut ts, &mut inboxes, "strays closed", |_, _| {
        strays.iter_mut().all(|s| s.closed())
    });
    poll_until(&mut ts, &mut inboxes, "handshakes expired", |ts, _| {
        ts[1].handshakes == 0
    });
    drop(silent);

    // Every frame came from the real peer, whole and in order.
    let expected = all_to_all(2, 400, &[12, 3000, MAX_FRAME]);
    assert!(inboxes[1].iter().all(|(from, _)| *from == 0));
    let got1 = inboxes[1].iter().map(|(_, f)| f);
    assert!(
        got1.eq(expected[&(0, 1)].iter()),
        "frames to process 1 differ"
    );
    let got0: Vec<Vec<u8>> = inboxes[0].iter().map(|(_, f)| f.clone()).collect();
    assert!(
        got0.iter().eq(expected[&(1, 0)].iter()),
        "frames to process 0 differ"
    );
    assert_eq!(ts[1].connection_count(), 1);
    assert_eq!(ts[1].connections.iter().count(), 1);
}

#[test]
fn a_full_send_buffer_refuses_frames_until_polls_drain_it() {
    let mut ts = mesh(3);
    let mut inboxes: Inboxes = vec![Vec::new(); 3];
    connect(&mut ts, &mut inboxes, 0, 1);
    connect(&mut ts, &mut inboxes, 0, 2);

    // Process 1 stops polling: frames to it pile up to the bound.
    let big = frame(0, 1, 1, MAX_FRAME);
    let mut accepted = 0usize;
    while send(&mut ts[0], 1, &big) {
        accepted += 1;
        assert!(accepted < 10_000, "the send buffer never filled");
    }
    assert!(ts[0].pending_output() > SEND_BOUND);
    assert!(ts[0].pending_output() <= SEND_BOUND + MAX_FRAME + 4);
    assert!(!send(&mut ts[0], 1, &frame(0, 1, 2, 12)), "still full");
    // Small frames to another peer still flow.
    for seq in 1..=100 {
        assert!(send(&mut ts[0], 2, &frame(0, 2, seq, 12)));
    }
    let mut inbox2 = Vec::new();
    let start = Instant::now();
    while inbox2.len() < 100 {
        assert!(
            start.elapsed() < PATIENCE,
            "small frames to process 2 stalled"
        );
        ts[0].poll(&mut |_, _: &[u8]| {});
        ts[2].poll(&mut |from, f: &[u8]| inbox2.push((from, f.to_vec())));
    }

    // Once process 1 reads, the buffer drains and frames are taken again.
    poll_until(&mut ts, &mut inboxes, "the buffer to drain", |ts, _| {
        ts[0].pending_output() == 0
    });
    assert!(send(&mut ts[0], 1, &frame(0, 1, 2, 12)));
    let want = accepted + 1;
    poll_until(&mut ts, &mut inboxes, "every frame", |_, inboxes| {
        inboxes[1].len() >= want
    });
    assert_eq!(inboxes[1].len(), want);
    assert!(inboxes[1][..accepted].iter().all(|(_, f)| *f == big));
    assert_eq!(inboxes[1][accepted].1, frame(0, 1, 2, 12));
}

#[test]
fn wait_sleeps_until_a_frame_arrives() {
    let mut ts = mesh(2);
    let mut inboxes: Inboxes = vec![Vec::new(); 2];
    connect(&mut ts, &mut inboxes, 0, 1);
    poll_all(&mut ts, &mut inboxes);
    let start = Instant::now();
    assert!(!ts[1].wait(Duration::from_millis(50)).unwrap());
    assert!(start.elapsed() >= Duration::from_millis(50));
    assert!(send(&mut ts[0], 1, &frame(0, 1, 1, 12)));
    assert!(ts[1].wait(PATIENCE).unwrap());
    poll_until(&mut ts, &mut inboxes, "the frame", |_, inboxes| {
        inboxes[1].len() == 1
    });
}

#[test]
fn epochs_do_not_mix_and_renew_starts_a_new_one() {
    let mut old = transport(0, 1);
    let mut new = transport(1, 2);
    old.connect_peer(1, new.local_addr());
    new.connect_peer(0, old.local_addr());
    let mut ts = vec![old, new];
    let mut inboxes: Inboxes = vec![Vec::new(); 2];
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300)
        || ts[0].connect_failures(1) < 3
        || ts[1].connect_failures(0) < 3
    {
        assert!(start.elapsed() < PATIENCE, "timed out");
        send(&mut ts[0], 1, &frame(0, 1, 0, 12));
        send(&mut ts[1], 0, &frame(1, 0, 0, 12));
        poll_all(&mut ts, &mut inboxes);
    }
    assert!(inboxes.iter().all(Vec::is_empty));
    assert_eq!(ts[0].connection_count() + ts[1].connection_count(), 0);

    let addr = ts[0].local_addr();
    ts[0].renew(EpochTag::new(2));
    assert_eq!(ts[0].local_addr(), addr);
    let peer_addr = ts[1].local_addr();
    ts[0].connect_peer(1, peer_addr);
    exchange(&mut ts, all_to_all(2, 20, &[12, 500]));
}

#[test]
fn a_peer_that_connected_is_answered_without_its_address() {
    let mut ts = vec![transport(0, 1), transport(1, 1)];
    let addr = ts[1].local_addr();
    ts[0].connect_peer(1, addr);
    let mut inboxes: Inboxes = vec![Vec::new(); 2];
    connect(&mut ts, &mut inboxes, 0, 1);
    poll_until(&mut ts, &mut inboxes, "the accepting side", |ts, _| {
        ts[1].is_connected(0)
    });
    exchange(&mut ts, all_to_all(2, 20, &[12, 70_000]));
}

#[test]
fn a_refused_connection_is_retried_with_a_growing_delay() {
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = gone.local_addr().unwrap();
    drop(gone);
    let mut ts = vec![transport(0, 1)];
    ts[0].connect_peer(1, addr);
    let mut inboxes: Inboxes = vec![Vec::new()];
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(200) {
        assert!(!send(&mut ts[0], 1, &frame(0, 1, 0, 12)));
        poll_all(&mut ts, &mut inboxes);
    }
    let failures = ts[0].connect_failures(1);
    // Delays of 1, 2, 4, ... ms: a handful of attempts, not thousands.
    assert!(
        (3..=10).contains(&failures),
        "{failures} attempts in 200 ms"
    );
    assert_eq!(ts[0].connection_count(), 0);
}

#[test]
fn a_connection_in_its_handshake_counts_as_traffic() {
    // Endpoints poll a transport with connections at every poll and an
    // idle one rarely: an accepted connection still waiting for its hello
    // must count, or its hello waits for the idle polls.
    let mut ts = vec![transport(0, 2)];
    let mut inboxes: Inboxes = vec![Vec::new()];
    assert!(!ts[0].has_connections());
    let silent = TcpStream::connect(ts[0].local_addr()).unwrap();
    poll_until(
        &mut ts,
        &mut inboxes,
        "the silent connection accepted",
        |ts, _| ts[0].has_connections(),
    );
    assert_eq!(ts[0].connection_count(), 0, "not established");
    drop(silent);
    poll_until(
        &mut ts,
        &mut inboxes,
        "the closed connection dropped",
        |ts, _| !ts[0].has_connections(),
    );
}

/// Open fds of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn dropping_the_transports_closes_every_socket() {
    // Other tests open fds concurrently: count in a process of our own.
    const CHILD: &str = "OXMPI_TCP_TEST_FD_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "transport::tcp::tests::dropping_the_transports_closes_every_socket",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "child failed:\n{stdout}");
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test:\n{stdout}"
        );
        return;
    }
    let before = open_fds();
    {
        let mut ts = mesh(3);
        exchange(&mut ts, all_to_all(3, 10, &[12, 100_000]));
        let mut stray = Stray::connect(&ts[2], "garbage", b"garbage!");
        let mut inboxes: Inboxes = vec![Vec::new(); 3];
        poll_until(&mut ts, &mut inboxes, "stray closed", |_, _| stray.closed());
        // Connections in every stage when the transports go.
        let late = transport(3, 1);
        ts[0].connect_peer(3, late.local_addr());
        send(&mut ts[0], 3, &frame(0, 3, 0, 12));
        let _pending = TcpStream::connect(ts[1].local_addr()).unwrap();
        poll_all(&mut ts, &mut inboxes);
        assert!(open_fds() > before);
    }
    assert_eq!(open_fds(), before);
}

#[test]
fn the_transport_can_move_between_threads() {
    fn is_send<T: Send>() {}
    is_send::<TcpTransport>();
}

/// Not a test: `cargo test --release --lib tcp_versus_plain -- --ignored
/// --nocapture` prints 8-byte latency and 1 MiB streaming bandwidth next
/// to plain TCP on the same machine.
#[test]
#[ignore]
fn tcp_versus_plain_sockets() {
    use std::net::TcpListener;
    use std::thread;
    const ROUNDS: u32 = 20_000;
    const MIB: usize = 1 << 20;
    const MESSAGES: usize = 2000;

    fn pair() -> (TcpTransport, TcpTransport) {
        let mut ts = mesh(2);
        let mut inboxes: Inboxes = vec![Vec::new(); 2];
        connect(&mut ts, &mut inboxes, 0, 1);
        let b = ts.pop().unwrap();
        (ts.pop().unwrap(), b)
    }
    /// Sleeps on the sockets whenever a poll finds nothing, as the
    /// blocking calls of plain sockets do.
    fn recv_one(t: &mut TcpTransport, sink: &mut [u8]) -> usize {
        loop {
            let mut len = 0;
            if t.poll(&mut |_, f: &[u8]| {
                sink[..f.len()].copy_from_slice(f);
                len = f.len();
            }) > 0
            {
                return len;
            }
            t.wait(Duration::from_secs(1)).unwrap();
        }
    }

    // Latency, oxmpi's transport.
    let (mut a, mut b) = pair();
    let echo = thread::spawn(move || {
        let mut buf = vec![0u8; MAX_FRAME];
        for _ in 0..ROUNDS {
            let n = recv_one(&mut b, &mut buf);
            while !send(&mut b, 0, &buf[..n]) {}
        }
        b
    });
    let mut buf = vec![0u8; MAX_FRAME];
    let start = Instant::now();
    for _ in 0..ROUNDS {
        while !send(&mut a, 1, &[7u8; 8]) {}
        recv_one(&mut a, &mut buf);
    }
    let ours = start.elapsed() / ROUNDS / 2;
    let mut b = echo.join().unwrap();

    // Latency, plain blocking sockets.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let echo = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        let mut m = [0u8; 8];
        for _ in 0..ROUNDS {
            s.read_exact(&mut m).unwrap();
            s.write_all(&m).unwrap();
        }
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let mut m = [7u8; 8];
    let start = Instant::now();
    for _ in 0..ROUNDS {
        s.write_all(&m).unwrap();
        s.read_exact(&mut m).unwrap();
    }
    let plain = start.elapsed() / ROUNDS / 2;
    echo.join().unwrap();
    println!("8-byte latency: tcp transport {ours:?}, plain TCP {plain:?}");

    // Bandwidth, oxmpi's transport: 1 MiB messages as pieces of MAX_FRAME,
    // copied out of the frames as the engine does.
    let sink = thread::spawn(move || {
        let mut message = vec![0u8; MIB];
        let mut got = 0;
        while got < MESSAGES * MIB {
            let n = b.poll(&mut |_, f: &[u8]| {
                let at = got % MIB;
                message[at..at + f.len()].copy_from_slice(f);
                got += f.len();
            });
            if n == 0 {
                b.wait(Duration::from_secs(1)).unwrap();
            }
        }
        while !send(&mut b, 0, b"done") {}
        b
    });
    let message = vec![3u8; MIB];
    let start = Instant::now();
    for _ in 0..MESSAGES {
        for piece in message.chunks(MAX_FRAME) {
            while !a.try_send(1, piece.len(), &mut |out: &mut [u8]| {
                out.copy_from_slice(piece)
            }) {
                a.poll(&mut |_, _: &[u8]| {});
            }
        }
    }
    recv_one(&mut a, &mut buf);
    let ours = (MESSAGES * MIB) as f64 / start.elapsed().as_secs_f64() / 1e9;
    sink.join().unwrap();

    // Bandwidth, plain blocking sockets.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let sink = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut message = vec![0u8; MIB];
        for _ in 0..MESSAGES {
            s.read_exact(&mut message).unwrap();
        }
        s.write_all(b"done").unwrap();
    });
    let mut s = TcpStream::connect(addr).unwrap();
    let start = Instant::now();
    for _ in 0..MESSAGES {
        s.write_all(&message).unwrap();
    }
    s.read_exact(&mut [0u8; 4]).unwrap();
    let plain = (MESSAGES * MIB) as f64 / start.elapsed().as_secs_f64() / 1e9;
    sink.join().unwrap();
    println!("1 MiB streaming: tcp transport {ours:.2} GB/s, plain TCP {plain:.2} GB/s");
}

/// What a [`Placer`] got, in order.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Delivered(Vec<u8>),
    /// A placed frame: its head and its body as written in place.
    Placed(Vec<u8>, Vec<u8>),
}

/// A sink that places the frames whose head starts with 1 in memory of its
/// own and has the others delivered whole.
#[derive(Default)]
struct Placer {
    area: Option<Box<[u8]>>,
    got: Vec<Got>,
}

impl Sink for Placer {
    fn deliver(&mut self, _from: ProcessId, frame: &[u8]) {
        self.got.push(Got::Delivered(frame.to_vec()));
    }

    fn place(&mut self, _from: ProcessId, head: &[u8], len: usize) -> Option<Placement> {
        assert_eq!(head.len(), PLACE_HEAD);
        assert!(self.area.is_none(), "one frame is placed at a time");
        if head[0] != 1 {
            return None;
        }
        let area = self
            .area
            .insert(vec![0u8; len - PLACE_HEAD].into_boxed_slice());
        let ptr = std::ptr::NonNull::new(area.as_mut_ptr()).unwrap();
        // SAFETY: the boxed area stays allocated and untouched until
        // `placed` takes it.
        Some(unsafe { Placement::new(ptr, area.len()) })
    }

    fn placed(&mut self, _from: ProcessId, head: &[u8], body_len: usize) {
        let area = self.area.take().expect("a frame was being placed");
        assert_eq!(area.len(), body_len);
        self.got.push(Got::Placed(head.to_vec(), area.into_vec()));
    }
}

#[test]
fn large_frames_are_written_from_their_parts_and_placed_by_the_sink() {
    let mut ts = mesh(2);
    let mut inboxes: Inboxes = vec![Vec::new(); 2];
    connect(&mut ts, &mut inboxes, 0, 1);
    // Placeable and declined large frames, with small frames between them,
    // enough bytes to fill the socket buffers many times over.
    let mut expected = Vec::new();
    let mut frames: VecDeque<(Vec<u8>, Vec<u8>)> = VecDeque::new();
    for i in 0..60u32 {
        let body_len = [200_000, 17_000, 100, 250_000][i as usize % 4];
        let mut head = frame(0, 1, i, PLACE_HEAD);
        head[0] = (i % 3 != 0) as u8;
        let body = frame(0, 1, i + 1000, body_len.max(12));
        // A frame larger than a read is always placed when the sink takes
        // it; a smaller one may have arrived whole before its head was
        // looked at, and then it is delivered.
        let placed = match (head[0] == 1, body.len()) {
            (false, _) | (true, 0..=16_000) => Some(false),
            (true, 16_001..=99_999) => None,
            (true, _) => Some(true),
        };
        expected.push((placed, head.clone(), body.clone()));
        frames.push_back((head, body));
    }
    let mut placer = Placer::default();
    let start = Instant::now();
    while placer.got.len() < expected.len() {
        assert!(start.elapsed() < PATIENCE, "timed out streaming frames");
        if let Some((head, body)) = frames.front() {
            if ts[0].try_send_parts(1, head, body) {
                frames.pop_front();
            }
        }
        ts[0].poll(&mut |_, _: &[u8]| panic!("nothing is sent to 0"));
        ts[1].poll(&mut placer);
    }
    assert_eq!(placer.got.len(), expected.len());
    for (i, (got, (placed, head, body))) in placer.got.iter().zip(&expected).enumerate() {
        match got {
            Got::Placed(h, b) => {
                assert_ne!(*placed, Some(false), "frame {i} should not be placed");
                assert!(h == head && b == body, "placed frame {i} differs");
            }
            Got::Delivered(f) => {
                assert_ne!(*placed, Some(true), "frame {i} should be placed");
                assert!(
                    *f == [head.clone(), body.clone()].concat(),
                    "frame {i} differs"
                );
            }
        }
    }
    assert_eq!(ts[0].pending_output(), 0);
}
