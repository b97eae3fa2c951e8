//! A [`Prober`] over TCP on loopback: a server thread echoing as in Listing 1 of the
//! LogGP-assessment paper.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Instant;

use super::{Budget, Methodology, ProbeError};
use crate::CalibrationError;
use crate::calibrate::Prober;

/// Control header before each trial (not timed): `n` (u32), size (u64), quit flag (u32).
const HEADER: usize = 16;

/// `PRTT(n, d, s)` between this thread and a server thread over TCP on 127.0.0.1, with
/// `TCP_NODELAY` on both ends.
///
/// Each trial follows Listing 1 of the paper: the client sends `n` messages of `s` bytes,
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
/// use commcost::calibrate::Prober;
/// use commcost::probe::{Budget, Methodology, TcpLoopbackProber};
///
/// let budget = Budget::new(Duration::from_secs(10), 1 << 20);
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
    buffer: Vec<u8>,
    methodology: Methodology,
    budget: Budget,
}

impl TcpLoopbackProber {
    /// Starts the server thread and connects to it; messages may be up to `max_size` bytes.
    ///
    /// # Errors
    ///
    /// [`ProbeError::OutOfMemory`] if `max_size` exceeds the budget; [`ProbeError::Io`] for
    /// socket errors.
    pub fn start(
        max_size: u64,
        methodology: Methodology,
        budget: Budget,
    ) -> Result<Self, ProbeError> {
        budget.check_bytes("TCP message buffers (client and server)", 2 * max_size)?;
        let len = usize::try_from(max_size)
            .map_err(|_| ProbeError::InvalidPlan("max_size beyond the address space".into()))?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let address = listener.local_addr()?;
        let server = std::thread::Builder::new()
            .name("commcost-tcp-echo".into())
            .spawn(move || {
                if let Ok((stream, _)) = listener.accept() {
                    // errors end the server; the client sees them as I/O errors
                    let _ = serve(stream, len);
                }
            })?;
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            server: Some(server),
            buffer: (0..len).map(|i| i as u8).collect(),
            methodology,
            budget,
        })
    }

    /// One timed trial of Listing 1.
    fn trial(&mut self, n: u32, delay: f64, size: usize) -> Result<f64, ProbeError> {
        let mut header = [0u8; HEADER];
        header[..4].copy_from_slice(&n.to_le_bytes());
        header[4..12].copy_from_slice(&(size as u64).to_le_bytes());
        self.stream.write_all(&header)?;
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
}

/// The server: per trial, read the header, acknowledge, receive `n` messages, send one back.
fn serve(mut stream: TcpStream, max: usize) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buffer = vec![0u8; max];
    let mut header = [0u8; HEADER];
    loop {
        stream.read_exact(&mut header)?;
        let n = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let mut size_bytes = [0u8; 8];
        size_bytes.copy_from_slice(&header[4..12]);
        let size = usize::try_from(u64::from_le_bytes(size_bytes)).unwrap_or(usize::MAX);
        let quit = header[12] != 0;
        if quit || size > max {
            return Ok(());
        }
        stream.write_all(&[1])?;
        for _ in 0..n {
            stream.read_exact(&mut buffer[..size])?;
        }
        stream.write_all(&buffer[..size])?;
    }
}

impl Prober for TcpLoopbackProber {
    /// The minimum over the methodology's samples of the mean of its repetitions of one
    /// Listing-1 trial, seconds.
    ///
    /// # Errors
    ///
    /// [`CalibrationError::Probe`] for `n = 0`, a size of 0 or above the prober's maximum, a
    /// non-finite or negative delay, an exhausted budget or a socket error.
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, CalibrationError> {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if n == 0 || size == 0 || size > self.buffer.len() || !(delay >= 0.0 && delay.is_finite()) {
            return Err(ProbeError::InvalidPlan(format!(
                "PRTT(n = {n}, d = {delay}, s = {size}) with messages of 1 ..= {} bytes",
                self.buffer.len()
            ))
            .into());
        }
        let mut best = f64::INFINITY;
        for _ in 0..self.methodology.samples.max(1) {
            self.budget.check()?;
            let reps = self.methodology.repetitions.max(1);
            let mut total = 0.0;
            for _ in 0..reps {
                total += self.trial(n, delay, size)?;
            }
            best = best.min(total / f64::from(reps));
        }
        Ok(best)
    }
}

impl Drop for TcpLoopbackProber {
    fn drop(&mut self) {
        let mut header = [0u8; HEADER];
        header[12] = 1;
        let _ = self.stream.write_all(&header);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}
