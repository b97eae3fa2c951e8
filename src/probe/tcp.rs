//! A [`Prober`] over TCP on loopback: a server thread echoing as in Listing 1 of the
//! LogGP-assessment paper, and half round trips of strided messages for log_3 P (lognp §4.1).

use std::cell::Cell;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Instant;

use super::Prober;
use super::{Budget, Methodology, ProbeError};
use crate::Message;

/// Control header before each trial (not timed): n, mode, size, block, stride.
const HEADER: usize = 32;

/// What the server does with a trial.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Listing 1: receive `n` messages of `size` bytes, send one back.
    Prtt = 0,
    /// A ping-pong of a layout: receive `size` packed bytes, unpack them into a strided buffer
    /// (`block` bytes every `stride`), pack them again and send them back.
    Layout = 1,
    /// Stop serving.
    Quit = 2,
}

struct Header {
    n: u32,
    mode: Mode,
    size: u64,
    block: u64,
    stride: u64,
}

impl Header {
    fn encode(&self) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[..4].copy_from_slice(&self.n.to_le_bytes());
        h[4..8].copy_from_slice(&(self.mode as u32).to_le_bytes());
        h[8..16].copy_from_slice(&self.size.to_le_bytes());
        h[16..24].copy_from_slice(&self.block.to_le_bytes());
        h[24..32].copy_from_slice(&self.stride.to_le_bytes());
        h
    }

    fn decode(h: &[u8; HEADER]) -> Self {
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let mode = match u32_at(4) {
            0 => Mode::Prtt,
            1 => Mode::Layout,
            _ => Mode::Quit,
        };
        Self {
            n: u32_at(0),
            mode,
            size: u64_at(8),
            block: u64_at(16),
            stride: u64_at(24),
        }
    }
}

/// `PRTT(n, d, s)` between this thread and a server thread over TCP on 127.0.0.1, with
/// `TCP_NODELAY` on both ends; and half round trips of strided messages, remote and to self.
///
/// Each PRTT trial follows Listing 1 of the paper: the client sends `n` messages of `s` bytes,
/// busy-waiting `d` seconds between them, and the server, having received all `n`, sends one
/// `s`-byte message back; the client times from its first send to the end of the reply. A
/// control header and a one-byte acknowledgement precede each trial, outside the timed part.
/// One [`Prober::prtt`] call reports the minimum over the methodology's samples of the mean of
/// its repetitions.
///
/// The server thread ends when the prober is dropped.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use commcost::probe::Prober;
/// use commcost::probe::{Budget, Methodology, TcpLoopbackProber};
///
/// let budget = Budget::new(Duration::from_secs(10), 1 << 24);
/// let mut prober = TcpLoopbackProber::start(1 << 16, Methodology::quick(), budget)?;
/// let one = prober.prtt(1, 0.0, 1024)?;
/// let sixteen = prober.prtt(16, 0.0, 1024)?;
/// assert!(one > 0.0 && sixteen > one);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TcpLoopbackProber {
    stream: TcpStream,
    server: Option<JoinHandle<()>>,
    /// Both ends of a connection of this thread to itself, non-blocking (sends to self).
    self_pair: (TcpStream, TcpStream),
    /// Packed message buffer.
    buffer: Vec<u8>,
    /// Receive buffer of sends to self.
    scratch: Vec<u8>,
    /// The client's strided user buffer, source and destination of layout transfers.
    user: Vec<u8>,
    methodology: Methodology,
    budget: Budget,
}

impl TcpLoopbackProber {
    /// Starts the server thread and connects to it; messages may be up to `max_size` bytes, and
    /// strided layouts may span up to 16 `max_size` bytes.
    ///
    /// # Errors
    ///
    /// [`ProbeError::OutOfMemory`] if the buffers exceed the budget; [`ProbeError::InvalidPlan`]
    /// if they overflow `u64` bytes or the address space; [`ProbeError::Io`] for socket errors.
    pub fn start(
        max_size: u64,
        methodology: Methodology,
        budget: Budget,
    ) -> Result<Self, ProbeError> {
        Self::start_with_span(max_size, max_size.saturating_mul(16), methodology, budget)
    }

    /// As [`start`](Self::start), with strided layouts spanning up to `span` bytes.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with_span(
        max_size: u64,
        span: u64,
        methodology: Methodology,
        budget: Budget,
    ) -> Result<Self, ProbeError> {
        // checked: buffers that overflow u64 bytes are an invalid request, not a wrapped number
        let bytes = max_size
            .checked_mul(3)
            .and_then(|b| b.checked_add(span.checked_mul(2)?))
            .ok_or_else(|| {
                ProbeError::InvalidPlan(format!(
                    "buffers for max_size {max_size} and span {span} overflow u64 bytes"
                ))
            })?;
        budget.check_bytes("TCP message and strided buffers (client and server)", bytes)?;
        let (len, span_len) = match (usize::try_from(max_size), usize::try_from(span)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                return Err(ProbeError::InvalidPlan(
                    "max_size beyond the address space".into(),
                ));
            }
        };
        // the client's buffers, allocated before anything starts (an allocation failure is an
        // error, not an abort)
        let limit = budget.max_bytes;
        let buffer = super::try_filled("TCP message buffer", len, limit, |i| i as u8)?;
        let scratch = super::try_filled("TCP receive buffer", len, limit, |_| 0)?;
        let user = super::try_filled("TCP strided buffer", span_len, limit, |i| (i % 251) as u8)?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let address = listener.local_addr()?;
        let server = std::thread::Builder::new()
            .name("commcost-tcp-echo".into())
            .spawn(move || {
                if let Ok((stream, _)) = listener.accept() {
                    // errors end the server; the client sees them as I/O errors
                    let _ = serve(stream, len, span_len);
                }
            })?;
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        let self_listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let out = TcpStream::connect(self_listener.local_addr()?)?;
        let (back, _) = self_listener.accept()?;
        for s in [&out, &back] {
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
        }
        Ok(Self {
            stream,
            server: Some(server),
            self_pair: (out, back),
            buffer,
            scratch,
            user,
            methodology,
            budget,
        })
    }

    /// One timed trial of Listing 1.
    fn trial(&mut self, n: u32, delay: f64, size: usize) -> Result<f64, ProbeError> {
        let header = Header {
            n,
            mode: Mode::Prtt,
            size: size as u64,
            block: 0,
            stride: 0,
        };
        self.stream.write_all(&header.encode())?;
        let mut ack = [0u8; 1];
        self.stream.read_exact(&mut ack)?;
        let start = Instant::now();
        for i in 0..n {
            if i > 0 && delay > 0.0 {
                let until = Instant::now();
                while until.elapsed().as_secs_f64() < delay {
                    std::hint::spin_loop();
                }
            }
            self.stream.write_all(&self.buffer[..size])?;
        }
        self.stream.read_exact(&mut self.buffer[..size])?;
        Ok(start.elapsed().as_secs_f64())
    }

    /// Half the round trip of one message of `layout` (its stride and block length; the
    /// offset is ignored), timed by the methodology, seconds:
    ///
    /// * `to_self = false` — to the server thread and back: the client packs the message from
    ///   its strided buffer (nothing to pack when contiguous), sends it, the server unpacks it
    ///   into a strided buffer and packs it again to send it back, the client unpacks it. As an
    ///   MPI ping-pong with a derived datatype: `T01(s, d)`, or `T01(s)` when contiguous.
    /// * `to_self = true` — through a connection of this thread to itself: pack, send, receive,
    ///   unpack; the middleware path without the network, `T00(s, d)` or `T00(s)`.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for an empty message or one beyond the buffers;
    /// [`ProbeError::Io`]; an exhausted budget.
    pub fn half_round_trip(&mut self, layout: &Message, to_self: bool) -> Result<f64, ProbeError> {
        let size = layout.bytes();
        if size == 0 || size > self.buffer.len() as u64 || layout.extent() > self.user.len() as u64
        {
            return Err(ProbeError::InvalidPlan(format!(
                "layout of {size} bytes spanning {} bytes; the buffers hold {} and {}",
                layout.extent(),
                self.buffer.len(),
                self.user.len()
            )));
        }
        self.budget.check()?;
        let (count, block, stride) = if layout.is_contiguous() {
            (1, size as usize, size as usize)
        } else {
            (
                layout.count() as usize,
                layout.block_len() as usize,
                layout.stride() as usize,
            )
        };
        let failure: Cell<Option<ProbeError>> = Cell::new(None);
        let methodology = self.methodology;
        let time = if to_self {
            methodology.time(|| {
                if let Err(e) = self.self_cycle(count, block, stride) {
                    failure.set(Some(e));
                }
            })
        } else {
            let header = Header {
                n: 1,
                mode: Mode::Layout,
                size,
                block: block as u64,
                stride: stride as u64,
            };
            methodology.time(|| {
                if let Err(e) = self.remote_cycle(&header, count, block, stride) {
                    failure.set(Some(e));
                }
            }) / 2.0
        };
        match failure.into_inner() {
            Some(e) => Err(e),
            None => Ok(time),
        }
    }

    /// Pack (if strided), send to self, receive, unpack (if strided).
    fn self_cycle(&mut self, count: usize, block: usize, stride: usize) -> Result<(), ProbeError> {
        let size = count * block;
        let strided = count > 1;
        if strided {
            pack(&self.user, &mut self.buffer, count, block, stride);
        }
        let (mut written, mut read) = (0, 0);
        let (out, back) = (&self.self_pair.0, &self.self_pair.1);
        // a contiguous message is received straight into the user buffer
        let (source, destination): (&[u8], &mut [u8]) = if strided {
            (&self.buffer[..size], &mut self.scratch[..size])
        } else {
            (&self.buffer[..size], &mut self.user[..size])
        };
        while read < size {
            if written < size {
                match (&*out).write(&source[written..]) {
                    Ok(k) => written += k,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
            }
            match (&*back).read(&mut destination[read..]) {
                Ok(0) => return Err(ProbeError::Io("self connection closed".into())),
                Ok(k) => read += k,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
        }
        if strided {
            unpack(&self.scratch, &mut self.user, count, block, stride);
        }
        Ok(())
    }

    /// One remote ping-pong of a layout (header and acknowledgement included in the time:
    /// they are two small messages, as an MPI rendezvous would add).
    fn remote_cycle(
        &mut self,
        header: &Header,
        count: usize,
        block: usize,
        stride: usize,
    ) -> Result<(), ProbeError> {
        let size = count * block;
        self.stream.write_all(&header.encode())?;
        let mut ack = [0u8; 1];
        self.stream.read_exact(&mut ack)?;
        if count > 1 {
            pack(&self.user, &mut self.buffer, count, block, stride);
            self.stream.write_all(&self.buffer[..size])?;
            self.stream.read_exact(&mut self.buffer[..size])?;
            unpack(&self.buffer, &mut self.user, count, block, stride);
        } else {
            self.stream.write_all(&self.user[..size])?;
            self.stream.read_exact(&mut self.user[..size])?;
        }
        Ok(())
    }
}

/// Measures [`TcpLoopbackProber::half_round_trip`] for every `(layout, to_self)` in shuffled
/// passes and returns the median per entry, in order (the methodology of [`super`]).
///
/// # Errors
///
/// As [`TcpLoopbackProber::half_round_trip`].
pub fn measure_layouts(
    prober: &mut TcpLoopbackProber,
    layouts: &[(Message, bool)],
    methodology: &Methodology,
    budget: &Budget,
    progress: super::ProgressFn<'_>,
) -> Result<Vec<f64>, ProbeError> {
    super::measure_grid(
        "strided half round trips",
        layouts,
        methodology,
        budget,
        progress,
        |(layout, to_self)| prober.half_round_trip(&layout, to_self),
    )
}

/// Copies `count` blocks of `block` bytes, `stride` apart in `from`, into `to` back to back.
fn pack(from: &[u8], to: &mut [u8], count: usize, block: usize, stride: usize) {
    for (i, chunk) in to[..count * block].chunks_exact_mut(block).enumerate() {
        chunk.copy_from_slice(&from[i * stride..i * stride + block]);
    }
}

/// The inverse of [`pack`].
fn unpack(from: &[u8], to: &mut [u8], count: usize, block: usize, stride: usize) {
    for (i, chunk) in from[..count * block].chunks_exact(block).enumerate() {
        to[i * stride..i * stride + block].copy_from_slice(chunk);
    }
}

/// The server: per trial, read the header, acknowledge, then run the trial.
fn serve(mut stream: TcpStream, max: usize, span: usize) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let out_of_memory = |_| std::io::Error::from(std::io::ErrorKind::OutOfMemory);
    let mut buffer =
        super::try_filled("server buffer", max, u64::MAX, |_| 0u8).map_err(out_of_memory)?;
    let mut user = super::try_filled("server strided buffer", span, u64::MAX, |_| 0u8)
        .map_err(out_of_memory)?;
    let mut raw = [0u8; HEADER];
    loop {
        stream.read_exact(&mut raw)?;
        let h = Header::decode(&raw);
        let size = usize::try_from(h.size).unwrap_or(usize::MAX);
        if h.mode == Mode::Quit || size > max {
            return Ok(());
        }
        stream.write_all(&[1])?;
        match h.mode {
            Mode::Prtt => {
                for _ in 0..h.n {
                    stream.read_exact(&mut buffer[..size])?;
                }
                stream.write_all(&buffer[..size])?;
            }
            Mode::Layout => {
                let (block, stride) = (h.block as usize, h.stride as usize);
                let count = size / block.max(1);
                stream.read_exact(&mut buffer[..size])?;
                if count > 1 && (count - 1) * stride + block <= span {
                    unpack(&buffer, &mut user, count, block, stride);
                    pack(&user, &mut buffer, count, block, stride);
                }
                stream.write_all(&buffer[..size])?;
            }
            Mode::Quit => return Ok(()),
        }
    }
}

impl Prober for TcpLoopbackProber {
    /// The minimum over the methodology's samples of the mean of its repetitions of one
    /// Listing-1 trial, seconds.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for `n = 0`, a size of 0 or above the prober's maximum, a
    /// non-finite or negative delay, an exhausted budget or a socket error.
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, ProbeError> {
        let (methodology, budget, max) = (self.methodology, self.budget.clone(), self.buffer.len());
        super::prtt_min_of_means(&methodology, &budget, (n, delay, size), max, |n, d, s| {
            self.trial(n, d, s)
        })
    }
}

impl Drop for TcpLoopbackProber {
    fn drop(&mut self) {
        let quit = Header {
            n: 0,
            mode: Mode::Quit,
            size: 0,
            block: 0,
            stride: 0,
        };
        let _ = self.stream.write_all(&quit.encode());
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}
