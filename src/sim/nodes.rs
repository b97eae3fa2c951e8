//! Where each rank runs: [`NodeMap`], and the two-level platform it makes with a model inside a
//! node and a model between nodes ([`TwoLevel`]).

use super::SimError;
use crate::CommModel;

/// The node each rank runs on: ranks `0..ranks()`, nodes `0..nodes()`, every node holding at
/// least one rank.
///
/// # Examples
///
/// ```
/// use commcost::sim::NodeMap;
///
/// // 2 nodes of 3 ranks, as `mpirun --map-by core` (or by slot) places them
/// let block = NodeMap::block(2, 3)?;
/// assert_eq!((0..6).map(|r| block.node(r)).collect::<Vec<_>>(), [0, 0, 0, 1, 1, 1]);
/// // as `mpirun --map-by node` places them
/// let round_robin = NodeMap::round_robin(2, 3)?;
/// assert_eq!((0..6).map(|r| round_robin.node(r)).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1]);
/// // an explicit map: every node named from 0 up
/// let map = NodeMap::explicit(vec![0, 0, 1])?;
/// assert_eq!((map.ranks(), map.nodes()), (3, 2));
/// assert!(NodeMap::explicit(vec![0, 2]).is_err()); // node 1 holds no rank
/// assert!(NodeMap::block(0, 4).is_err());
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeMap {
    node_of: Vec<u32>,
    nodes: u32,
}

/// The most ranks a [`NodeMap`] holds (the simulator's bound on ranks).
pub const MAX_MAPPED_RANKS: u64 = 1 << 24;

impl NodeMap {
    /// `nodes` nodes of `ranks_per_node` ranks, consecutive ranks on one node (Open MPI's
    /// `--map-by core` / `--map-by slot`, MPICH's default): rank `r` on node
    /// `r / ranks_per_node`.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidOption`] (`nodes`) for zero nodes or ranks per node, or more than
    /// [`MAX_MAPPED_RANKS`] ranks.
    pub fn block(nodes: u32, ranks_per_node: u32) -> Result<Self, SimError> {
        let total = check_shape(nodes, ranks_per_node)?;
        Ok(Self {
            node_of: (0..total).map(|r| r / ranks_per_node).collect(),
            nodes,
        })
    }

    /// `nodes` nodes of `ranks_per_node` ranks, dealt round robin (Open MPI's `--map-by
    /// node`): rank `r` on node `r mod nodes`.
    ///
    /// # Errors
    ///
    /// As [`block`](Self::block).
    pub fn round_robin(nodes: u32, ranks_per_node: u32) -> Result<Self, SimError> {
        let total = check_shape(nodes, ranks_per_node)?;
        Ok(Self {
            node_of: (0..total).map(|r| r % nodes).collect(),
            nodes,
        })
    }

    /// Rank `r` on node `node_of[r]`; the nodes must be `0..n`, each holding a rank.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidOption`] (`nodes`) for an empty map, more than
    /// [`MAX_MAPPED_RANKS`] ranks, or a node number `k` while some node below `k` holds no
    /// rank.
    pub fn explicit(node_of: Vec<u32>) -> Result<Self, SimError> {
        let bad = |message| {
            Err(SimError::InvalidOption {
                name: "nodes",
                message,
            })
        };
        if node_of.is_empty() {
            return bad("a node map of no rank");
        }
        if node_of.len() as u64 > MAX_MAPPED_RANKS {
            return bad("more ranks than the simulator's 2^24");
        }
        let nodes = node_of.iter().max().map_or(0, |&n| n.saturating_add(1));
        let mut used = vec![false; nodes as usize];
        for &n in &node_of {
            used[n as usize] = true;
        }
        if used.contains(&false) {
            return bad("the nodes must be numbered 0, 1, ... with a rank on each");
        }
        Ok(Self { node_of, nodes })
    }

    /// Ranks mapped.
    pub fn ranks(&self) -> u32 {
        self.node_of.len() as u32
    }

    /// Nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// The node of rank `r` (0 for a rank beyond the map).
    pub fn node(&self, r: u32) -> u32 {
        self.node_of.get(r as usize).copied().unwrap_or(0)
    }

    /// Every rank's node, by rank.
    pub fn as_slice(&self) -> &[u32] {
        &self.node_of
    }
}

fn check_shape(nodes: u32, ranks_per_node: u32) -> Result<u32, SimError> {
    let total = u64::from(nodes) * u64::from(ranks_per_node);
    if nodes == 0 || ranks_per_node == 0 || total > MAX_MAPPED_RANKS {
        return Err(SimError::InvalidOption {
            name: "nodes",
            message: "nodes and ranks per node at least 1, at most 2^24 ranks",
        });
    }
    Ok(total as u32)
}

/// A two-level platform for [`Simulator::simulate_two_level`](super::Simulator::simulate_two_level):
/// the ranks' nodes, the model of a message between two nodes, and that transport's eager
/// limit. The model of a message inside a node is the simulation's own (`model`) with its
/// [`SimOptions`](super::SimOptions).
///
/// A message between ranks of one node costs the intra-node model's quantities and uses the
/// sending rank's own sending NIC and the receiving rank's own receiving NIC (shared memory:
/// each rank copies for itself). A message between nodes costs the inter-node model's and uses
/// its node's one sending NIC and the other node's one receiving NIC: the ranks of a node take
/// turns on its link in each direction. A shaped link
/// ([`SimOptions::link_burst`](super::SimOptions::link_burst)) is the nodes' link.
#[derive(Clone, Copy)]
pub struct TwoLevel<'a> {
    /// The ranks' nodes (as many ranks as the schedule's).
    pub nodes: &'a NodeMap,
    /// The model of a message between two nodes.
    pub inter: &'a dyn CommModel,
    /// Messages between nodes larger than this use the rendezvous protocol; `None`: all eager.
    pub inter_rendezvous_above: Option<u64>,
}

impl std::fmt::Debug for TwoLevel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TwoLevel")
            .field("nodes", &self.nodes.nodes())
            .field("ranks", &self.nodes.ranks())
            .field("inter_rendezvous_above", &self.inter_rendezvous_above)
            .finish_non_exhaustive()
    }
}

/// How ranks are dealt to nodes of equal size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Placement {
    /// Consecutive ranks on one node ([`NodeMap::block`]: Open MPI's `--map-by core` / `slot`).
    #[default]
    Block,
    /// Ranks dealt to the nodes in turn ([`NodeMap::round_robin`]: `--map-by node`).
    RoundRobin,
}

/// Where the ranks of a job run, as a model file stores it (`"nodes": {"layout": ...}`):
/// nodes of `ranks_per_node` ranks with a [`Placement`] (`{"ranks_per_node": 4, "placement":
/// "block"}`), or an explicit map, rank by rank (`{"map": [0, 0, 1, 1]}`).
///
/// # Examples
///
/// ```
/// use commcost::sim::{NodeLayout, Placement};
///
/// let four = NodeLayout::Uniform { ranks_per_node: 4, placement: Placement::Block };
/// let map = four.map_for(8)?;
/// assert_eq!((map.nodes(), map.node(5)), (2, 1));
/// assert!(four.map_for(6).is_err()); // not a multiple of 4
/// # Ok::<(), commcost::sim::SimError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "LayoutFields", into = "LayoutFields")
)]
pub enum NodeLayout {
    /// Every node holds `ranks_per_node` ranks, placed by `placement`.
    Uniform {
        /// Ranks per node, at least 1.
        ranks_per_node: u32,
        /// How ranks are dealt to nodes.
        placement: Placement,
    },
    /// Rank `r` on node `map.node(r)`.
    Map(NodeMap),
}

impl NodeLayout {
    /// The node map of a job of `processes` ranks.
    ///
    /// # Errors
    ///
    /// [`SimError::InvalidOption`] (`nodes`): `processes` not a multiple of the ranks per node,
    /// or not the explicit map's number of ranks.
    pub fn map_for(&self, processes: u64) -> Result<NodeMap, SimError> {
        let bad = |message| SimError::InvalidOption {
            name: "nodes",
            message,
        };
        match self {
            Self::Uniform {
                ranks_per_node,
                placement,
            } => {
                let k = u64::from(*ranks_per_node);
                if k == 0 || !processes.is_multiple_of(k) {
                    return Err(bad(
                        "the processes are not a multiple of the ranks per node",
                    ));
                }
                let nodes = u32::try_from(processes / k)
                    .map_err(|_| bad("more ranks than the simulator's 2^24"))?;
                match placement {
                    Placement::Block => NodeMap::block(nodes, *ranks_per_node),
                    Placement::RoundRobin => NodeMap::round_robin(nodes, *ranks_per_node),
                }
            }
            Self::Map(map) if u64::from(map.ranks()) == processes => Ok(map.clone()),
            Self::Map(_) => Err(bad("the node map places another number of ranks")),
        }
    }
}

impl NodeLayout {
    /// The node map of a communicator of `processes` ranks in a job laid out this way: as
    /// [`map_for`](Self::map_for), except that with nodes of `k` ranks a communicator of fewer
    /// than `k` ranks sits on one node (as the consecutive ranks of a sub-communicator do).
    ///
    /// # Errors
    ///
    /// As [`map_for`](Self::map_for).
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::sim::{NodeLayout, Placement};
    ///
    /// let four = NodeLayout::Uniform { ranks_per_node: 4, placement: Placement::Block };
    /// assert_eq!(four.map_for_communicator(2)?.nodes(), 1);
    /// assert_eq!(four.map_for_communicator(8)?.nodes(), 2);
    /// assert!(four.map_for_communicator(6).is_err());
    /// # Ok::<(), commcost::sim::SimError>(())
    /// ```
    pub fn map_for_communicator(&self, processes: u64) -> Result<NodeMap, SimError> {
        match *self {
            Self::Uniform { ranks_per_node, .. }
                if processes > 0 && processes < u64::from(ranks_per_node) =>
            {
                // fewer than a node's ranks (so below 2^32)
                NodeMap::block(1, processes as u32)
            }
            _ => self.map_for(processes),
        }
    }
}

/// The serde form of [`NodeLayout`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ranks_per_node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    placement: Option<Placement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    map: Option<Vec<u32>>,
}

#[cfg(feature = "serde")]
impl TryFrom<LayoutFields> for NodeLayout {
    type Error = String;

    fn try_from(f: LayoutFields) -> Result<Self, Self::Error> {
        match (f.ranks_per_node, f.map) {
            (Some(0), None) => Err("`ranks_per_node` must be at least 1".into()),
            (Some(k), None) => Ok(Self::Uniform {
                ranks_per_node: k,
                placement: f.placement.unwrap_or_default(),
            }),
            (None, Some(map)) if f.placement.is_none() => NodeMap::explicit(map)
                .map(Self::Map)
                .map_err(|e| format!("`map`: {e}")),
            (None, Some(_)) => Err("`placement` goes with `ranks_per_node`, not `map`".into()),
            (Some(_), Some(_)) => Err("give `ranks_per_node` or `map`, not both".into()),
            (None, None) => Err("give `ranks_per_node` (with `placement`) or `map`".into()),
        }
    }
}

#[cfg(feature = "serde")]
impl From<NodeLayout> for LayoutFields {
    fn from(l: NodeLayout) -> Self {
        match l {
            NodeLayout::Uniform {
                ranks_per_node,
                placement,
            } => Self {
                ranks_per_node: Some(ranks_per_node),
                placement: Some(placement),
                map: None,
            },
            NodeLayout::Map(map) => Self {
                ranks_per_node: None,
                placement: None,
                map: Some(map.node_of),
            },
        }
    }
}
