//! The trees of Open MPI's `coll_base_topo.c`.

use crate::collectives::ompi::MAX_TREE_FANOUT;
use crate::util::bits::floor_log2;

/// A tree of `coll_base_topo.c`: each process's parent and children (in Open MPI's order).
pub(super) struct Tree {
    pub(super) root: u64,
    pub(super) parent: Vec<u64>,
    pub(super) children: Vec<Vec<u64>>,
}

impl Tree {
    pub(super) fn from_children(p: u64, root: u64, children: impl Fn(u64) -> Vec<u64>) -> Self {
        let n = p as usize;
        let mut parent = vec![root; n];
        let mut lists = Vec::with_capacity(n);
        for v in 0..p {
            let c = children(v);
            for &child in &c {
                parent[child as usize] = v;
            }
            lists.push(c);
        }
        Self {
            root,
            parent,
            children: lists,
        }
    }

    /// `ompi_coll_base_topo_build_chain`: `fanout` chains (clamped to `1..=32` and `P - 1`),
    /// the first `(P - 1) mod f` of them one longer.
    pub(super) fn chain(fanout: u64, p: u64) -> Self {
        let f = fanout
            .clamp(1, MAX_TREE_FANOUT)
            .min(p.saturating_sub(1))
            .max(1);
        let n = p.saturating_sub(1);
        let mut heads = Vec::new();
        let mut ends = Vec::new();
        if n > 0 {
            let (max_len, mark) = if n.is_multiple_of(f) {
                (n / f, f + 1)
            } else {
                (n / f + 1, n % f)
            };
            let mut head = 1;
            for i in 0..f {
                let len = if i < mark { max_len } else { max_len - 1 };
                if len == 0 {
                    continue;
                }
                heads.push(head);
                ends.push(head + len - 1);
                head += len;
            }
        }
        Self::from_children(p, 0, |v| {
            if v == 0 {
                heads.clone()
            } else if ends.contains(&v) || v + 1 >= p {
                Vec::new()
            } else {
                vec![v + 1]
            }
        })
    }

    /// `ompi_coll_base_topo_build_tree(2, ..)`: level order, children `v + 2^l`, `v + 2^(l+1)`.
    pub(super) fn binary(p: u64) -> Self {
        Self::from_children(p, 0, |v| {
            let delta = 1u64 << floor_log2(v + 1);
            [v + delta, v + 2 * delta]
                .into_iter()
                .filter(|&c| c < p)
                .collect()
        })
    }

    /// `ompi_coll_base_topo_build_bmtree`: children `v ^ mask` for the masks above `v`'s top bit.
    pub(super) fn binomial(p: u64) -> Self {
        Self::from_children(p, 0, |v| {
            let mut mask = if v == 0 {
                1
            } else {
                1u64 << (64 - v.leading_zeros())
            };
            let mut out = Vec::new();
            while mask < p {
                let child = v ^ mask;
                if child >= p {
                    break;
                }
                out.push(child);
                mask <<= 1;
            }
            out
        })
    }

    /// `ompi_coll_base_topo_build_in_order_bmtree` (reduce's and gather's binomial tree):
    /// children `v + 2^j` for the `2^j` below `v`'s lowest set bit (every `2^j < P` for the
    /// root), smallest subtree first, so that a subtree holds consecutive ranks.
    pub(super) fn in_order_binomial(p: u64) -> Self {
        Self::from_children(p, 0, |v| {
            super::super::shapes::in_order_binomial_children(v, p).collect()
        })
    }

    /// `ompi_coll_base_topo_build_kmtree`: children `v + c r^j` (`j` below `v`'s lowest
    /// non-zero digit, from the largest down, `c = 1 … r-1`) that are below `P`.
    pub(super) fn knomial(radix: u64, p: u64) -> Self {
        let r = u128::from(radix.max(2));
        let pp = u128::from(p);
        Self::from_children(p, 0, |v| {
            let v = u128::from(v);
            let mut mask = 1u128;
            while mask < pp {
                if v % (r * mask) != 0 {
                    break;
                }
                mask *= r;
            }
            mask /= r;
            let mut out = Vec::new();
            while mask > 0 {
                for c in 1..r {
                    let child = v + mask * c;
                    if child >= pp {
                        break;
                    }
                    out.push(child as u64);
                }
                mask /= r;
            }
            out
        })
    }

    /// `ompi_coll_base_topo_build_in_order_bintree`: root `P - 1`, left child `parent - 1`,
    /// right child the top of the right subtree of `⌊size/2⌋` processes.
    pub(super) fn in_order_binary(p: u64) -> Self {
        // signed, as in Open MPI: a left child becomes the parent (-1 for an empty subtree)
        let children = |rank: u64| {
            let (mut size, mut myrank, mut parent, mut delta) =
                (p as i64, rank as i64, p as i64 - 1, 0i64);
            loop {
                let rightsize = size >> 1;
                let lchild = if size > 1 { parent - 1 } else { -1 };
                let rchild = if lchild > 0 { rightsize - 1 } else { -1 };
                if myrank == parent {
                    return [lchild, rchild]
                        .into_iter()
                        .filter(|&c| c >= 0)
                        .map(|c| (c + delta) as u64)
                        .collect::<Vec<_>>();
                }
                if myrank > rchild {
                    size = size - rightsize - 1;
                    delta += rightsize;
                    myrank -= rightsize;
                    parent = size - 1;
                } else {
                    size = rightsize;
                    parent = rchild;
                }
            }
        };
        Self::from_children(p, p - 1, children)
    }

    pub(super) fn max_children(&self) -> u64 {
        self.children.iter().map(Vec::len).max().unwrap_or(0) as u64
    }
}
