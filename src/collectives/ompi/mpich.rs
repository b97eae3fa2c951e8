//! MPICH's names of the Open MPI algorithms that MPICH also runs
//! ([`MpichAlgorithm`](crate::collectives::MpichAlgorithm)): the same communication pattern under MPICH's
//! `MPIR_CVAR_<COLL>_INTRA_ALGORITHM` name. Segmented variants map only unsegmented.

use super::OmpiAlgorithm;
use super::{
    Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, ReduceScatter, Scatter,
};
use crate::collectives::MpichAlgorithm;

macro_rules! mpich {
    ($ty:ident, $prefix:literal, |$a:ident| $body:expr) => {
        impl MpichAlgorithm for $ty {
            const MPICH_COLLECTIVE: &'static str = <$ty as OmpiAlgorithm>::COLLECTIVE.name();
            const MPICH_PREFIX: &'static str = $prefix;
            fn mpich_name(&self) -> Option<&'static str> {
                let $a = *self;
                $body
            }
        }
    };
}

mpich!(Bcast, "Bcast", |a| match a {
    Bcast::Binomial { segment: 0 } => Some("binomial"),
    Bcast::ScatterAllgather => Some("scatter_recursive_doubling_allgather"),
    Bcast::ScatterAllgatherRing => Some("scatter_ring_allgather"),
    _ => None,
});
mpich!(Allreduce, "Allreduce", |a| match a {
    Allreduce::RecursiveDoubling => Some("recursive_doubling"),
    Allreduce::Ring => Some("ring"),
    Allreduce::Rabenseifner => Some("reduce_scatter_allgather"),
    _ => None,
});
mpich!(Reduce, "Reduce", |a| match a {
    Reduce::Binomial { segment: 0 } => Some("binomial"),
    Reduce::Rabenseifner => Some("reduce_scatter_gather"),
    _ => None,
});
mpich!(Allgather, "Allgather", |a| match a {
    Allgather::Bruck => Some("brucks"),
    Allgather::RecursiveDoubling => Some("recursive_doubling"),
    Allgather::Ring => Some("ring"),
    _ => None,
});
mpich!(Alltoall, "Alltoall", |a| match a {
    Alltoall::Pairwise => Some("pairwise"),
    Alltoall::ModifiedBruck => Some("brucks"),
    _ => None,
});
mpich!(Barrier, "Barrier", |a| match a {
    Barrier::Bruck => Some("k_dissemination"),
    _ => None,
});
mpich!(ReduceScatter, "Reduce_scatter", |a| match a {
    ReduceScatter::RecursiveHalving => Some("recursive_halving"),
    _ => None,
});
mpich!(Gather, "Gather", |a| match a {
    Gather::Binomial => Some("binomial"),
    _ => None,
});
mpich!(Scatter, "Scatter", |a| match a {
    Scatter::Binomial => Some("binomial"),
    _ => None,
});
