//! Measurements over MPI (feature `mpi`, rsmpi): `PRTT(n, d, s)` between two ranks exactly as
//! Listing 1 of the LogGP-assessment paper, and the half round trips of lognp §4.1 with MPI
//! vector datatypes; and the timing of whole collectives on every rank of a communicator
//! ([`time_collective`], [`time_reduce_local`]; without `unsafe`).
//!
//! Two ranks take part: the *client* (usually rank 0) runs the calibration and calls
//! [`MpiProber`]; the *server* (usually rank 1) runs [`serve`] until the client's prober is
//! [finished](MpiProber::finish). A small control message before each trial, outside the timed
//! part, tells the server what to do.
//!
//! This is the only module where the crate uses `unsafe`: rsmpi builds a view of a buffer with
//! an MPI derived datatype through an `unsafe fn`, whose contract is that the datatype stays
//! within the buffer. Each use checks the layout's extent against the buffer first.

#![allow(unsafe_code)]

use std::time::Instant;

use mpi::datatype::{MutView, UserDatatype, View};
use mpi::point_to_point as p2p;
use mpi::topology::{Process, Rank};
use mpi::traits::{Communicator, Destination, Equivalence, Source};

pub use super::mpi_collectives::{
    CSV_HEADER, CollectivePlan, CollectiveTiming, MAX_SIZE, ReduceLocalTiming, time_collective,
    time_reduce_local,
};

use super::Prober;
use super::{Budget, Methodology, ProbeError};
use crate::Message;

/// Control message: mode, n, size, count, block, stride (as u64).
type Control = [u64; 6];

const PRTT: u64 = 0;
/// `PRTT` control slot 3: the server receives into a buffer it never sends from.
const SEPARATE: u64 = 1;
const REMOTE_LAYOUT: u64 = 1;
const QUIT: u64 = 2;

/// Where the PRTT trials keep the bytes they send and receive — which decides whether the
/// bytes a rank sends were just written by it (and sit modified in its cache) or not.
///
/// On this project's build machine (2-core AMD EPYC VM, Open MPI 4.1.4, vader with CMA
/// single copy) one 64 KiB message takes 36-40 µs one way with [`Echo`](Self::Echo) and
/// 7.7-8.3 µs with [`Separate`](Self::Separate), in the same minute (a C ping-pong with each
/// buffer use; `osu_latency`, which uses separate buffers, reports 7.95 µs): with CMA the
/// receiver copies straight out of the sender's buffer, and lines the sender has just
/// written must first leave the sender's cache.
///
/// # Examples
///
/// ```
/// use commcost::probe::mpi::PayloadBuffers;
/// // the PRTT method's trials as the prober always ran them
/// assert_eq!(PayloadBuffers::default(), PayloadBuffers::Echo);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadBuffers {
    /// One buffer per rank: each message is received into the buffer it is returned from,
    /// so every message sends bytes its sender has just received (written). Data that a
    /// program has just computed or received travels like this.
    #[default]
    Echo,
    /// Each rank sends from a buffer it never writes and receives into another: the bytes
    /// sent are the ones the peer read in the previous trial (as `osu_latency` and benchmark
    /// loops that repeat a call on unchanged buffers measure).
    Separate,
}

/// The client side of MPI measurements against a peer rank running [`serve`].
pub struct MpiProber<'c, C: Communicator> {
    comm: &'c C,
    peer: Rank,
    buffer: Vec<u8>,
    /// The buffer replies are received into with [`PayloadBuffers::Separate`] (empty with
    /// [`PayloadBuffers::Echo`]).
    reply: Vec<u8>,
    payload: PayloadBuffers,
    /// Strided user buffers (send and receive side).
    source: Vec<u8>,
    destination: Vec<u8>,
    methodology: Methodology,
    budget: Budget,
}

impl<C: Communicator> std::fmt::Debug for MpiProber<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiProber")
            .field("rank", &self.comm.rank())
            .field("peer", &self.peer)
            .field("max_size", &self.buffer.len())
            .field("span", &self.source.len())
            .finish()
    }
}

fn to_count(v: u64) -> Result<i32, ProbeError> {
    i32::try_from(v).map_err(|_| ProbeError::InvalidPlan(format!("{v} exceeds MPI's int count")))
}

/// A vector datatype of bytes for `layout` (one block of all its bytes when contiguous).
fn datatype(layout: &Message) -> Result<UserDatatype, ProbeError> {
    let (count, block, stride) = if layout.is_contiguous() {
        (1, layout.bytes(), layout.bytes())
    } else {
        (layout.count(), layout.block_len(), layout.stride())
    };
    Ok(UserDatatype::vector(
        to_count(count)?,
        to_count(block)?,
        to_count(stride)?,
        &u8::equivalent_datatype(),
    ))
}

impl<'c, C: Communicator> MpiProber<'c, C> {
    /// A prober on this rank against `peer`, for messages up to `max_size` bytes and strided
    /// layouts spanning up to `span` bytes.
    ///
    /// # Errors
    ///
    /// [`ProbeError::OutOfMemory`] when the buffers exceed the budget,
    /// [`ProbeError::InvalidPlan`] when `peer` is this rank or outside the communicator.
    pub fn new(
        comm: &'c C,
        peer: Rank,
        max_size: u64,
        span: u64,
        methodology: Methodology,
        budget: Budget,
    ) -> Result<Self, ProbeError> {
        if peer == comm.rank() || peer < 0 || peer >= comm.size() {
            return Err(ProbeError::InvalidPlan(format!(
                "peer rank {peer} for rank {} of {}",
                comm.rank(),
                comm.size()
            )));
        }
        budget.check_bytes(
            "MPI buffers",
            max_size.saturating_add(span.saturating_mul(2)),
        )?;
        let len = usize::try_from(max_size)
            .map_err(|_| ProbeError::InvalidPlan("max_size beyond the address space".into()))?;
        let span = usize::try_from(span)
            .map_err(|_| ProbeError::InvalidPlan("span beyond the address space".into()))?;
        Ok(Self {
            comm,
            peer,
            buffer: (0..len).map(|i| i as u8).collect(),
            reply: Vec::new(),
            payload: PayloadBuffers::Echo,
            source: (0..span).map(|i| (i % 251) as u8).collect(),
            destination: vec![0; span],
            methodology,
            budget,
        })
    }

    fn peer(&self) -> Process<'_> {
        self.comm.process_at_rank(self.peer)
    }

    fn control(&self, control: Control) {
        self.peer().send(&control[..]);
        let mut ack = [0u8; 1];
        self.peer().receive_into(&mut ack[..]);
    }

    /// One trial of Listing 1: blocking sends with a busy-wait delay, one blocking receive.
    fn trial(&mut self, n: u32, delay: f64, size: usize) -> f64 {
        let separate = self.payload == PayloadBuffers::Separate;
        self.control([PRTT, u64::from(n), size as u64, u64::from(separate), 0, 0]);
        let start = Instant::now();
        for i in 0..n {
            if i > 0 && delay > 0.0 {
                let until = Instant::now();
                while until.elapsed().as_secs_f64() < delay {
                    std::hint::spin_loop();
                }
            }
            self.peer().send(&self.buffer[..size]);
        }
        let peer = self.comm.process_at_rank(self.peer);
        if separate {
            peer.receive_into(&mut self.reply[..size]);
        } else {
            peer.receive_into(&mut self.buffer[..size]);
        }
        start.elapsed().as_secs_f64()
    }

    /// Half the round trip of one message of `layout` described by an MPI vector datatype
    /// (the offset is ignored), timed by the methodology, seconds:
    ///
    /// * `to_self = false` — a ping-pong with the peer, which receives and returns the message
    ///   with the same datatype: `T01(s, d)`, or `T01(s)` when contiguous;
    /// * `to_self = true` — `MPI_Sendrecv` from this rank to itself: `T00(s, d)` / `T00(s)`.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for an empty message, one whose extent exceeds the buffers
    /// or whose counts exceed MPI's `int`; an exhausted budget.
    pub fn half_round_trip(&mut self, layout: &Message, to_self: bool) -> Result<f64, ProbeError> {
        if layout.bytes() == 0 || layout.extent() > self.source.len() as u64 {
            return Err(ProbeError::InvalidPlan(format!(
                "layout of {} bytes spanning {} bytes; the buffers span {}",
                layout.bytes(),
                layout.extent(),
                self.source.len()
            )));
        }
        self.budget.check()?;
        let vector = datatype(layout)?;
        let extent = layout.extent() as usize;
        let methodology = self.methodology;
        if to_self {
            let this = self.comm.this_process();
            let (source, destination) = (&self.source[..extent], &mut self.destination[..extent]);
            Ok(methodology.time(|| {
                // SAFETY: the datatype's extent is `layout.extent()` bytes, and both views cover
                // exactly that many bytes of their buffers (checked above)
                let send = unsafe { View::with_count_and_datatype(source, 1, &vector) };
                let mut receive =
                    unsafe { MutView::with_count_and_datatype(&mut *destination, 1, &vector) };
                p2p::send_receive_into(&send, &this, &mut receive, &this);
            }))
        } else {
            let control = [
                REMOTE_LAYOUT,
                1,
                layout.bytes(),
                layout.count(),
                layout.block_len(),
                layout.stride(),
            ];
            let mut total = 0.0;
            let mut best = f64::INFINITY;
            for _ in 0..methodology.samples.max(1) {
                let reps = methodology.repetitions.max(1);
                for _ in 0..reps {
                    self.control(control);
                    let start = Instant::now();
                    {
                        let peer = self.comm.process_at_rank(self.peer);
                        // SAFETY: as above; the views cover `extent` bytes of the buffers
                        let send = unsafe {
                            View::with_count_and_datatype(&self.source[..extent], 1, &vector)
                        };
                        peer.send(&send);
                        let mut receive = unsafe {
                            MutView::with_count_and_datatype(
                                &mut self.destination[..extent],
                                1,
                                &vector,
                            )
                        };
                        peer.receive_into(&mut receive);
                    }
                    total += start.elapsed().as_secs_f64();
                }
                best = best.min(total / f64::from(reps));
                total = 0.0;
            }
            Ok(best / 2.0)
        }
    }

    /// The prober with its PRTT trials using `buffers` (default [`PayloadBuffers::Echo`]); the
    /// server follows the client's choice per trial.
    ///
    /// # Errors
    ///
    /// [`ProbeError::OutOfMemory`] when the second buffer of [`PayloadBuffers::Separate`]
    /// exceeds the budget.
    pub fn with_payload_buffers(mut self, buffers: PayloadBuffers) -> Result<Self, ProbeError> {
        self.reply = match buffers {
            PayloadBuffers::Echo => Vec::new(),
            PayloadBuffers::Separate => {
                let len = self.buffer.len();
                self.budget.check_bytes(
                    "MPI buffers",
                    (len as u64)
                        .saturating_mul(2)
                        .saturating_add((self.source.len() as u64).saturating_mul(2)),
                )?;
                vec![0; len]
            }
        };
        self.payload = buffers;
        Ok(self)
    }

    /// The PRTT trials' [`PayloadBuffers`].
    #[must_use]
    pub fn payload_buffers(&self) -> PayloadBuffers {
        self.payload
    }

    /// Tells the peer to stop serving.
    pub fn finish(self) {
        self.peer().send(&[QUIT, 0, 0, 0, 0, 0][..]);
    }
}

impl<C: Communicator> Prober for MpiProber<'_, C> {
    /// The minimum over the methodology's samples of the mean of its repetitions of one
    /// Listing-1 trial with blocking `MPI_Send` / `MPI_Recv`, seconds.
    ///
    /// # Errors
    ///
    /// [`ProbeError::InvalidPlan`] for `n = 0`, a size of 0 or above the prober's maximum, a
    /// non-finite or negative delay, or an exhausted budget.
    fn prtt(&mut self, n: u32, delay: f64, size: u64) -> Result<f64, ProbeError> {
        let (methodology, budget, max) = (self.methodology, self.budget.clone(), self.buffer.len());
        super::prtt_min_of_means(&methodology, &budget, (n, delay, size), max, |n, d, s| {
            Ok(self.trial(n, d, s))
        })
    }
}

/// The server side: answers the trials of an [`MpiProber`] on rank `client` until it finishes.
/// Buffers hold messages up to `max_size` bytes and layouts spanning `span` bytes (use the
/// client's values).
///
/// # Errors
///
/// [`ProbeError::InvalidPlan`] for a request beyond the buffers.
pub fn serve<C: Communicator>(
    comm: &C,
    client: Rank,
    max_size: usize,
    span: usize,
) -> Result<(), ProbeError> {
    let peer = comm.process_at_rank(client);
    let mut buffer = vec![0u8; max_size];
    let mut incoming: Vec<u8> = Vec::new();
    let mut strided = vec![0u8; span];
    loop {
        let mut control: Control = [0; 6];
        peer.receive_into(&mut control[..]);
        let [mode, n, size, count, block, stride] = control;
        if mode == QUIT {
            return Ok(());
        }
        peer.send(&[1u8][..]);
        match mode {
            PRTT => {
                let size = size as usize;
                if size > max_size {
                    return Err(ProbeError::InvalidPlan(format!("{size} > {max_size}")));
                }
                if count == SEPARATE {
                    // receive into a buffer never sent from; reply from one never written
                    if incoming.len() < size {
                        incoming = vec![0u8; max_size];
                    }
                    for _ in 0..n {
                        peer.receive_into(&mut incoming[..size]);
                    }
                } else {
                    for _ in 0..n {
                        peer.receive_into(&mut buffer[..size]);
                    }
                }
                peer.send(&buffer[..size]);
            }
            REMOTE_LAYOUT => {
                let layout = if count <= 1 || stride == block {
                    Message::contiguous(size)
                } else {
                    Message::vector(count, block, stride)
                        .map_err(|e| ProbeError::InvalidPlan(e.to_string()))?
                };
                let extent = layout.extent() as usize;
                if extent > span {
                    return Err(ProbeError::InvalidPlan(format!("extent {extent} > {span}")));
                }
                let vector = datatype(&layout)?;
                // SAFETY: the datatype's extent is `extent` bytes and the views cover exactly
                // that many bytes of `strided` (checked above)
                let mut receive =
                    unsafe { MutView::with_count_and_datatype(&mut strided[..extent], 1, &vector) };
                peer.receive_into(&mut receive);
                let send = unsafe { View::with_count_and_datatype(&strided[..extent], 1, &vector) };
                peer.send(&send);
            }
            _ => return Err(ProbeError::InvalidPlan(format!("unknown mode {mode}"))),
        }
    }
}

/// Measures [`MpiProber::half_round_trip`] for every `(layout, to_self)` in shuffled passes and
/// returns the median per entry, in order (the methodology of [`super`]).
///
/// # Errors
///
/// As [`MpiProber::half_round_trip`].
pub fn measure_layouts<C: Communicator>(
    prober: &mut MpiProber<'_, C>,
    layouts: &[(Message, bool)],
    methodology: &Methodology,
    budget: &Budget,
    progress: super::ProgressFn<'_>,
) -> Result<Vec<f64>, ProbeError> {
    super::measure_grid(
        "MPI half round trips",
        layouts,
        methodology,
        budget,
        progress,
        |(layout, to_self)| prober.half_round_trip(&layout, to_self),
    )
}
