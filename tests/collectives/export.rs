//! Tuning-file export: Open MPI rules files read back by an independent parser, MPICH selection
//! JSON checked against the grammar of MPICH's `csel.c`, decision tables through serde.

use std::collections::BTreeSet;

use commcost::collectives::ompi::{self, OmpiAlgorithm};
use commcost::collectives::{self, Algorithm, DecisionTable, MpichAlgorithm, Problem, best};
use commcost::collectives::{Collective, Family};
use commcost::export::ExportError;
use commcost::{Message, export, presets};

/// `(comm size, [[msg size, alg, faninout, segsize]])`
type Block = (i64, Vec<[i64; 4]>);

/// A rules file as Open MPI reads it: comments stripped, then decimal integers.
#[derive(Debug)]
struct Parsed {
    /// `(collective id, blocks)`
    collectives: Vec<(i64, Vec<Block>)>,
}

fn parse_rules(text: &str) -> Parsed {
    let mut tokens = Vec::new();
    for line in text.lines() {
        let data = line.split('#').next().unwrap();
        for t in data.split_whitespace() {
            // C's %li reads a leading 0 as octal: never allowed
            assert!(t == "0" || !t.starts_with('0'), "leading zero in `{t}`");
            assert!(
                t.chars().all(|c| c.is_ascii_digit()),
                "not a decimal integer: `{t}`"
            );
            tokens.push(t.parse::<i64>().unwrap());
        }
    }
    let mut it = tokens.into_iter();
    let mut next = || it.next().expect("file ends early");
    let n = next();
    let mut collectives = Vec::new();
    for _ in 0..n {
        let id = next();
        let blocks = next();
        let mut bs = Vec::new();
        for _ in 0..blocks {
            let comm = next();
            let rules = next();
            let rs = (0..rules)
                .map(|_| [next(), next(), next(), next()])
                .collect();
            bs.push((comm, rs));
        }
        collectives.push((id, bs));
    }
    Parsed { collectives }
}

/// Highest algorithm ID per collective ID, and the `two_proc` IDs (Open MPI 4.1.4).
fn limits(id: i64) -> (i64, Option<i64>) {
    match id {
        0 => (6, Some(6)),
        2 => (6, None),
        3 => (5, Some(5)),
        6 => (6, Some(5)),
        7 => (9, None),
        9 | 15 => (3, None),
        11 => (7, None),
        12 => (4, None),
        other => panic!("unexpected collective id {other}"),
    }
}

fn check_invariants(parsed: &Parsed) {
    check_invariants_from(parsed, 1);
}

/// The invariants, with algorithm ids from `lowest` (0 where the file may defer).
fn check_invariants_from(parsed: &Parsed, lowest: i64) {
    let mut seen = BTreeSet::new();
    for (id, blocks) in &parsed.collectives {
        assert!(seen.insert(*id), "collective {id} twice");
        let (max_alg, two_proc) = limits(*id);
        assert!(!blocks.is_empty());
        for (b, (comm, rules)) in blocks.iter().enumerate() {
            assert!(*comm >= 1);
            if b > 0 {
                assert!(*comm > blocks[b - 1].0, "comm sizes not ascending");
            }
            assert!(!rules.is_empty());
            assert_eq!(rules[0][0], 0, "first msg_size of a block must be 0");
            for w in rules.windows(2) {
                assert!(w[1][0] > w[0][0], "msg sizes not ascending");
            }
            for r in rules {
                assert!(
                    (lowest..=max_alg).contains(&r[1]),
                    "algorithm {} of {id}",
                    r[1]
                );
                assert!(r[2] >= 0 && r[3] >= 0);
                if Some(r[1]) == two_proc {
                    let next = blocks.get(b + 1).map(|x| x.0);
                    assert!(*comm == 2 && next == Some(3), "two_proc outside P = 2");
                }
            }
        }
    }
}

/// Looks `(P, S)` up as Open MPI does: the last block with comm size <= P, the last rule with
/// msg_size <= S.
fn lookup(blocks: &[Block], p: i64, s: i64) -> Option<[i64; 3]> {
    let (_, rules) = blocks.iter().rev().find(|(c, _)| *c <= p)?;
    let r = rules.iter().rev().find(|r| r[0] <= s)?;
    Some([r[1], r[2], r[3]])
}

/// Every grid cell's rule names an algorithm as cheap as the best candidate (within the
/// exporter's tie tolerance).
fn check_choices<A: OmpiAlgorithm>(parsed: &Parsed, processes: &[u64], sizes: &[u64]) {
    let model = presets::open_mpi_openib();
    let (_, blocks) = parsed
        .collectives
        .iter()
        .find(|(id, _)| *id == i64::from(A::COLLECTIVE.ompi_id()))
        .unwrap();
    for &p in processes {
        let sizes: &[u64] = if A::COLLECTIVE == Collective::Barrier {
            &[0]
        } else {
            sizes
        };
        for &s in sizes {
            let bytes = A::COLLECTIVE.ompi_problem_bytes(s, p);
            let problem = Problem::new(p, Message::contiguous(bytes));
            let [alg, fan, seg] = lookup(blocks, p as i64, s as i64).unwrap();
            let chosen = A::candidates(&model, &problem)
                .into_iter()
                .find(|a| {
                    (
                        i64::from(a.ompi_id()),
                        a.faninout() as i64,
                        a.segment_size() as i64,
                    ) == (alg, fan, seg)
                })
                .unwrap_or_else(|| {
                    panic!("{}: rule {alg} {fan} {seg} is no candidate", A::COLLECTIVE)
                });
            let cost = chosen.cost(&model, &problem).unwrap();
            let cheapest = A::candidates(&model, &problem)
                .into_iter()
                .filter(|a| !a.ompi_name().starts_with("two_proc"))
                .map(|a| a.cost(&model, &problem).unwrap())
                .fold(f64::INFINITY, f64::min);
            assert!(
                cost <= cheapest * (1.0 + 1e-9),
                "{} P {p} S {s}: {chosen} costs {cost}, best {cheapest}",
                A::COLLECTIVE
            );
        }
    }
}

#[test]
fn ompi_rules_file_reads_back() {
    let model = presets::open_mpi_openib();
    let processes = [2, 4, 8, 16, 100];
    let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    let rules = export::ompi_rules(
        &model,
        &Family::Ompi.collectives(),
        &processes,
        &sizes,
        &Default::default(),
    )
    .unwrap();
    let parsed = parse_rules(&rules.to_string());
    assert_eq!(parsed.collectives.len(), 9);
    check_invariants(&parsed);
    check_choices::<ompi::Bcast>(&parsed, &processes, &sizes);
    check_choices::<ompi::Allreduce>(&parsed, &processes, &sizes);
    check_choices::<ompi::Reduce>(&parsed, &processes, &sizes);
    check_choices::<ompi::Allgather>(&parsed, &processes, &sizes);
    check_choices::<ompi::Alltoall>(&parsed, &processes, &sizes);
    check_choices::<ompi::Barrier>(&parsed, &processes, &sizes);
    check_choices::<ompi::ReduceScatter>(&parsed, &processes, &sizes);
    check_choices::<ompi::Gather>(&parsed, &processes, &sizes);
    check_choices::<ompi::Scatter>(&parsed, &processes, &sizes);
}

#[test]
fn two_proc_only_where_it_runs() {
    let model = presets::open_mpi_openib();
    let sizes = [1, 1024, 1 << 20];
    // a P = 2 block followed by P = 3: two_proc may be chosen; the parser checks it is only there
    for processes in [&[2u64, 3, 4][..], &[2, 8], &[2]] {
        let rules = export::ompi_rules(
            &model,
            &Family::Ompi.collectives(),
            processes,
            &sizes,
            &Default::default(),
        )
        .unwrap();
        check_invariants(&parse_rules(&rules.to_string()));
    }
}

#[test]
fn bad_grids_are_errors() {
    let model = presets::open_mpi_openib();
    let all = Family::Ompi.collectives();
    for (p, s) in [
        (&[][..], &[1u64][..]),
        (&[4, 2], &[1]),
        (&[0, 2], &[1]),
        (&[2], &[]),
        (&[2], &[5, 5]),
    ] {
        assert!(matches!(
            export::ompi_rules(&model, &all, p, s, &Default::default()),
            Err(ExportError::Grid { .. })
        ));
        assert!(matches!(
            export::mpich_json(&model, &[Collective::Bcast], p, s, &Default::default()),
            Err(ExportError::Grid { .. })
        ));
    }
    assert!(matches!(
        export::mpich_json(
            &model,
            &[Collective::ReduceScatter],
            &[2],
            &[1],
            &Default::default()
        ),
        Err(ExportError::Unsupported { .. })
    ));
}

/// A JSON value with object keys in document order (MPICH tries the keys of an object in order).
#[derive(Debug)]
enum Node {
    Object(Vec<(String, Node)>),
    Other,
}

impl<'de> serde::Deserialize<'de> for Node {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> Result<Node, M::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Node>()? {
                    entries.push((k, v));
                }
                Ok(Node::Object(entries))
            }
            fn visit_seq<S: serde::de::SeqAccess<'de>>(self, mut s: S) -> Result<Node, S::Error> {
                while s.next_element::<Node>()?.is_some() {}
                Ok(Node::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Other)
            }
        }
        d.deserialize_any(V)
    }
}

fn object(node: &Node) -> &[(String, Node)] {
    match node {
        Node::Object(e) => e,
        Node::Other => panic!("expected an object"),
    }
}

/// The collectives of MPICH's default selection table, in its order: MPICH 4.0.2 and 4.1.3,
/// `maint/tuning/coll/mpir/generic.json` (the same 44 in both).
const MPICH_COLLECTIVES: [&str; 44] = [
    "bcast",
    "allreduce",
    "allgather",
    "allgatherv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_block",
    "gather",
    "scatter",
    "gatherv",
    "scatterv",
    "scan",
    "exscan",
    "barrier",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "neighbor_allgather",
    "neighbor_allgatherv",
    "neighbor_alltoall",
    "neighbor_alltoallv",
    "neighbor_alltoallw",
    "ibarrier",
    "iallreduce",
    "iallgather",
    "iallgatherv",
    "ibcast",
    "ireduce",
    "ireduce_scatter",
    "igather",
    "iscatter",
    "igatherv",
    "iscatterv",
    "iexscan",
    "ialltoall",
    "ialltoallv",
    "ialltoallw",
    "ireduce_scatter_block",
    "iscan",
    "ineighbor_allgather",
    "ineighbor_allgatherv",
    "ineighbor_alltoall",
    "ineighbor_alltoallv",
    "ineighbor_alltoallw",
];

/// MPICH's intra-communicator algorithms of the priced collectives, from the `algorithm=` names
/// MPICH's JSON reader accepts (`src/mpi/coll/src/csel_container.c` of MPICH 4.0.2 and 4.1.3).
fn mpich_algorithms(version: &str, collective: &str) -> Vec<&'static str> {
    let v40 = version == "4.0";
    let mut names: Vec<&'static str> = match collective {
        "bcast" => vec![
            "binomial",
            "scatter_recursive_doubling_allgather",
            "scatter_ring_allgather",
            "smp",
        ],
        "allreduce" => vec!["recursive_doubling", "reduce_scatter_allgather", "smp"],
        "reduce" => vec!["binomial", "reduce_scatter_gather", "smp"],
        "allgather" => vec!["brucks", "recursive_doubling", "ring"],
        "alltoall" => vec![
            "brucks",
            "pairwise",
            "pairwise_sendrecv_replace",
            "scattered",
        ],
        "gather" | "scatter" => vec!["binomial"],
        "barrier" => vec![
            "smp",
            if v40 {
                "dissemination"
            } else {
                "k_dissemination"
            },
        ],
        other => panic!("unexpected collective {other}"),
    };
    if !v40 {
        names.extend(match collective {
            "bcast" => &["tree", "pipelined_tree"][..],
            "allreduce" => &["tree", "recexch", "ring", "k_reduce_scatter_allgather"],
            "allgather" | "alltoall" => &["k_brucks"],
            "barrier" => &["recexch"],
            _ => &[],
        });
    }
    names
}

/// The attributes of a call MPICH's selection keys read.
#[derive(Debug, Clone, Copy)]
struct Call {
    p: u64,
    /// `avg_msg_size` (bytes) or `total_msg_size`, as the collective uses it.
    size: u64,
    count: u64,
    builtin_op: bool,
    inplace: bool,
}

/// What MPICH selects for `call` under `node` (independent of the exporter: the rules of
/// MPICH's `csel.c` — keys tried in order, the first that holds is descended into). `None`
/// where no key holds (MPICH then fails an assertion).
fn decide(node: &[(String, Node)], call: &Call) -> Option<String> {
    for (key, child) in node {
        if let Some(name) = key.strip_prefix("algorithm=") {
            return Some(name.to_string());
        }
        let pof2 = 1u64 << (63 - call.p.leading_zeros());
        let number = |prefix: &str| key.strip_prefix(prefix).and_then(|n| n.parse::<u64>().ok());
        let holds = match key.as_str() {
            "comm_type=intra" | "is_commutative=yes" => true,
            "comm_type=inter" | "is_commutative=no" => false,
            "comm_hierarchy=parent" | "comm_hierarchy=any" => true,
            k if k.ends_with("=any") => true,
            "comm_size=pow2" => call.p.is_power_of_two(),
            "count<pow2" => call.count < pof2,
            "is_op_built_in=yes" => call.builtin_op,
            "is_op_built_in=no" => !call.builtin_op,
            "is_sendbuf_inplace=yes" => call.inplace,
            "is_sendbuf_inplace=no" => !call.inplace,
            k if k.starts_with("comm_size<=") => call.p <= number("comm_size<=").unwrap(),
            k if k.starts_with("comm_size<") => call.p < number("comm_size<").unwrap(),
            k if k.contains("_msg_size<=") => {
                call.size <= k.split("<=").nth(1).unwrap().parse::<u64>().unwrap()
            }
            k if k.contains("_msg_size<") => {
                call.size < k.split('<').nth(1).unwrap().parse::<u64>().unwrap()
            }
            other => panic!("key `{other}` not expected here"),
        };
        if holds {
            return decide(object(child), call);
        }
    }
    None
}

fn keys_once(node: &[(String, Node)], path: &str) {
    let mut seen = BTreeSet::new();
    for (k, child) in node {
        assert!(seen.insert(k.as_str()), "`{k}` twice under {path}");
        if let Node::Object(entries) = child {
            keys_once(entries, &format!("{path}/{k}"));
        }
    }
}

fn leaves(node: &[(String, Node)], out: &mut Vec<(String, Vec<String>)>) {
    for (k, child) in node {
        match k.strip_prefix("algorithm=") {
            Some(name) => out.push((
                name.to_string(),
                object(child).iter().map(|(p, _)| p.clone()).collect(),
            )),
            None => leaves(object(child), out),
        }
    }
}

const PRICED: [Collective; 8] = [
    Collective::Bcast,
    Collective::Allreduce,
    Collective::Reduce,
    Collective::Allgather,
    Collective::Alltoall,
    Collective::Gather,
    Collective::Scatter,
    Collective::Barrier,
];

fn export_mpich(
    model: &dyn commcost::CommModel,
    version: &str,
    collectives: &[Collective],
    processes: &[u64],
) -> Vec<(String, Node)> {
    let options = export::MpichJsonOptions {
        version: version.parse().unwrap(),
        ..Default::default()
    };
    let sizes: Vec<u64> = (0..34).map(|k| 1u64 << k).collect();
    let json = export::mpich_json(model, collectives, processes, &sizes, &options).unwrap();
    // plain JSON for any parser
    assert!(
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap()
            .is_object()
    );
    let root: Node = serde_json::from_str(&json).unwrap();
    object(&root).to_vec()
}

impl Clone for Node {
    fn clone(&self) -> Self {
        match self {
            Node::Object(e) => Node::Object(e.clone()),
            Node::Other => Node::Other,
        }
    }
}

#[test]
fn mpich_json_is_complete_and_names_only_the_versions_algorithms() {
    for version in ["4.0", "4.1", "4.2"] {
        for model in [presets::open_mpi_openib(), presets::mpich2_tcp()] {
            let root = export_mpich(&model, version, &PRICED, &[2, 3, 4, 8, 64]);
            keys_once(&root, "");
            let names: Vec<&str> = root
                .iter()
                .map(|(k, _)| k.strip_prefix("collective=").unwrap())
                .collect();
            assert_eq!(
                names, MPICH_COLLECTIVES,
                "every collective of MPICH's table, in order"
            );
            for (key, body) in &root {
                let collective = key.strip_prefix("collective=").unwrap();
                if ![
                    "bcast",
                    "allreduce",
                    "reduce",
                    "allgather",
                    "alltoall",
                    "gather",
                    "scatter",
                    "barrier",
                ]
                .contains(&collective)
                {
                    continue;
                }
                // intercommunicators keep MPICH's decision
                let body = object(body);
                assert_eq!(body.len(), 2, "{collective}");
                assert_eq!(body[1].0, "comm_type=inter", "{collective}");
                let mut found = Vec::new();
                leaves(object(&body[0].1), &mut found);
                let prefix = format!(
                    "MPIR_{}{}_intra_",
                    collective[..1].to_uppercase(),
                    &collective[1..]
                );
                for (function, params) in found {
                    let name = function
                        .strip_prefix(&prefix)
                        .unwrap_or_else(|| panic!("{version}: `{function}` under {collective}"));
                    assert!(
                        mpich_algorithms(version, collective).contains(&name),
                        "MPICH {version} has no {function}"
                    );
                    let want: Vec<String> = if name == "k_dissemination" {
                        vec!["k=2".into()]
                    } else {
                        vec![]
                    };
                    assert_eq!(params, want, "{function}");
                }
            }
        }
    }
}

#[test]
fn mpich_json_never_selects_an_algorithm_outside_its_preconditions() {
    let sizes: Vec<u64> = (0..30)
        .map(|k| 1u64 << k)
        .chain([3, 5, 7, 12345, 99_999])
        .collect();
    for version in ["4.0", "4.1"] {
        for model in [
            presets::open_mpi_openib(),
            presets::mpich2_tcp(),
            presets::open_mpi_gm(),
        ] {
            let root = export_mpich(&model, version, &PRICED, &[2, 4, 8, 64, 256]);
            let tree = |c: &str| {
                object(
                    &root
                        .iter()
                        .find(|(k, _)| *k == format!("collective={c}"))
                        .unwrap()
                        .1,
                )
                .to_vec()
            };
            let (allgather, allreduce, alltoall) =
                (tree("allgather"), tree("allreduce"), tree("alltoall"));
            for p in 1..=300u64 {
                for &s in &sizes {
                    for (builtin_op, inplace) in [(true, false), (false, false), (true, true)] {
                        let count = s; // unsigned chars
                        let call = Call {
                            p,
                            size: s,
                            count,
                            builtin_op,
                            inplace,
                        };
                        let what = format!("MPICH {version}, P = {p}, {s} B, {call:?}");
                        let ag = decide(
                            &allgather,
                            &Call {
                                size: s * p,
                                ..call
                            },
                        )
                        .expect(&what);
                        assert!(
                            p.is_power_of_two() || ag != "MPIR_Allgather_intra_recursive_doubling",
                            "{what}: {ag}"
                        );
                        let ar = decide(&allreduce, &call).expect(&what);
                        if ar == "MPIR_Allreduce_intra_reduce_scatter_allgather" {
                            assert!(builtin_op, "{what}: {ar} with a user-defined operator");
                            assert!(count >= 1 << (63 - p.leading_zeros()), "{what}: {ar}");
                        }
                        assert!(
                            builtin_op || p < 2 || ar == "MPIR_Allreduce_intra_recursive_doubling",
                            "{what}: {ar}"
                        );
                        // MPICH's alltoall reads the send count: 0 with MPI_IN_PLACE
                        let size = if inplace { 0 } else { s };
                        let aa = decide(&alltoall, &Call { size, ..call }).expect(&what);
                        assert_eq!(
                            inplace,
                            aa == "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
                            "{what}: {aa}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn mpich_json_leaves_communicators_below_the_grid_to_mpich() {
    let model = presets::open_mpi_openib();
    let root = export_mpich(&model, "4.0", &[Collective::Bcast], &[4, 16]);
    let bcast = object(&root[0].1);
    let intra = object(&bcast[0].1);
    assert_eq!(intra[0].0, "comm_size<4");
    // MPICH 4.0.2's generic.json: bcast on fewer than 8 processes is binomial (smp at 0 bytes)
    let small = Call {
        p: 3,
        size: 100,
        count: 100,
        builtin_op: true,
        inplace: false,
    };
    assert_eq!(
        decide(intra, &small).as_deref(),
        Some("MPIR_Bcast_intra_binomial")
    );
    // from 4 processes on the model decides: no smp there
    for p in [4, 5, 16, 1000] {
        let call = Call {
            p,
            size: 0,
            ..small
        };
        assert_ne!(
            decide(intra, &call).as_deref(),
            Some("MPIR_Bcast_intra_smp")
        );
    }
}

#[test]
fn exports_refuse_duplicates_huge_communicators_and_huge_grids() {
    let model = presets::open_mpi_openib();
    let twice = [Collective::Bcast, Collective::Allreduce, Collective::Bcast];
    let grid_error = |r: Result<String, ExportError>, what: &str| match r {
        Err(ExportError::Grid { what: w, detail }) => {
            assert_eq!(w, what, "{detail}");
            detail
        }
        other => panic!("expected a {what} error, got {other:?}"),
    };
    let d = grid_error(
        export::mpich_json(&model, &twice, &[2], &[1], &Default::default()),
        "collectives",
    );
    assert!(d.contains("bcast"), "{d}");
    let r =
        export::ompi_rules(&model, &twice, &[2], &[1], &Default::default()).map(|r| r.to_string());
    grid_error(r, "collectives");
    // 2^31 - 1 is the largest communicator an MPI `int` holds
    let limit = (1u64 << 31) - 1;
    assert!(
        export::ompi_rules(
            &model,
            &[Collective::Bcast],
            &[limit],
            &[1],
            &Default::default()
        )
        .is_ok()
    );
    for p in [limit + 1, u64::MAX] {
        let r = export::ompi_rules(
            &model,
            &[Collective::Bcast],
            &[2, p],
            &[1],
            &Default::default(),
        );
        grid_error(r.map(|r| r.to_string()), "processes");
        grid_error(
            export::mpich_json(
                &model,
                &[Collective::Bcast],
                &[2, p],
                &[1],
                &Default::default(),
            ),
            "processes",
        );
    }
    let procs: Vec<u64> = (2..4098).collect();
    let sizes: Vec<u64> = (1..100).collect();
    let r = export::ompi_rules(
        &model,
        &Family::Ompi.collectives(),
        &procs,
        &sizes,
        &Default::default(),
    );
    let d = grid_error(r.map(|r| r.to_string()), "grid");
    assert!(d.contains(&export::MAX_CELLS.to_string()), "{d}");
}

#[test]
fn decision_table_serde_round_trip_and_validation() {
    let model = presets::open_mpi_openib();
    let template = Problem::new(1, Message::contiguous(1));
    let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    let table =
        DecisionTable::<ompi::Bcast>::build(&model, &[2, 8, 64], &sizes, &template).unwrap();
    let json = serde_json::to_string(&table).unwrap();
    let back: DecisionTable<ompi::Bcast> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, table);
    // tampered files are refused
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut short = value.clone();
    short["best"].as_array_mut().unwrap().pop();
    assert!(serde_json::from_value::<DecisionTable<ompi::Bcast>>(short).is_err());
    let mut unsorted = value.clone();
    unsorted["processes"] = serde_json::json!([8, 2, 64]);
    assert!(serde_json::from_value::<DecisionTable<ompi::Bcast>>(unsorted).is_err());
    let mut extra = value.clone();
    extra["note"] = serde_json::json!("x");
    assert!(serde_json::from_value::<DecisionTable<ompi::Bcast>>(extra).is_err());
    let mut zero = value;
    zero["processes"] = serde_json::json!([0, 8, 64]);
    assert!(serde_json::from_value::<DecisionTable<ompi::Bcast>>(zero).is_err());
}

#[test]
fn decision_table_cells_and_switch_points() {
    let model = presets::open_mpi_openib();
    let template = Problem::new(1, Message::contiguous(1));
    let processes = [4, 64];
    let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    let table =
        DecisionTable::<collectives::Allreduce>::build(&model, &processes, &sizes, &template)
            .unwrap();
    let cells: Vec<_> = table.cells().collect();
    assert_eq!(cells.len(), processes.len() * sizes.len());
    // every cell is the best of its problem (oracle: `best` on its own)
    for &(p, s, a) in &cells {
        let problem = Problem::new(p, Message::contiguous(s));
        assert_eq!(
            a,
            best::<collectives::Allreduce>(&model, &problem).unwrap().0
        );
    }
    // switch points: exactly the neighbouring cells of a row that differ
    let mut expected = Vec::new();
    for w in cells.windows(2) {
        if w[0].0 == w[1].0 && w[0].2 != w[1].2 {
            expected.push((w[1].0, w[1].1, w[0].2, w[1].2));
        }
    }
    let got: Vec<_> = table
        .switch_points()
        .iter()
        .map(|s| (s.processes, s.size, s.from, s.to))
        .collect();
    assert_eq!(got, expected);
    assert!(!got.is_empty());
}

/// The textbook algorithms: `Display` and `FromStr` round trip, MPICH names as MPICH spells them.
#[test]
fn textbook_names_round_trip() {
    fn check<A: Algorithm + std::fmt::Display + std::str::FromStr>(all: &[A])
    where
        A::Err: std::fmt::Debug,
    {
        for a in all {
            let text = a.to_string();
            assert_eq!(text.parse::<A>().unwrap(), *a, "{text}");
            assert!(!text.contains(' ') && !text.contains('_'), "{text}");
            // the old spaced names still parse
            assert_eq!(a.name().parse::<A>().ok().is_some(), !text.contains(':'));
        }
    }
    use collectives::{
        Allgather, Allreduce, Alltoall, Barrier, Bcast, Gather, Reduce, Scan, Scatter,
    };
    check(&[
        Bcast::Linear,
        Bcast::Binomial,
        Bcast::ScatterAllgather,
        Bcast::Pipelined { segment: 8192 },
    ]);
    check(Scan::ALL);
    check(Reduce::ALL);
    check(Allreduce::ALL);
    check(Allgather::ALL);
    check(Gather::ALL);
    check(Scatter::ALL);
    check(Barrier::ALL);
    check(Alltoall::ALL);
    assert!("pipelined".parse::<Bcast>().is_err());
    assert!("pipelined:segment=0".parse::<Bcast>().is_err());
    assert_eq!(
        Bcast::ScatterAllgather.mpich_function().as_deref(),
        Some("MPIR_Bcast_intra_scatter_ring_allgather")
    );
    assert_eq!(Allgather::Bruck.mpich_name(), Some("brucks"));
    assert_eq!(Alltoall::PairwiseExchange.mpich_name(), Some("pairwise"));
    assert_eq!(Bcast::Linear.mpich_name(), None);
}

/// `OmpiRules` reads its own output back (the labels aside) and answers lookups as the
/// independent parser does.
#[test]
fn rules_file_from_str_round_trip_and_lookup() {
    use commcost::export::OmpiRules;
    let model = presets::open_mpi_openib();
    let processes = [2, 3, 4, 8, 100];
    let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    let rules = export::ompi_rules(
        &model,
        &Family::Ompi.collectives(),
        &processes,
        &sizes,
        &Default::default(),
    )
    .unwrap();
    let text = rules.to_string();
    let back: OmpiRules = text.parse().unwrap();
    let fields = |r: &OmpiRules| {
        r.collectives
            .iter()
            .map(|c| {
                let blocks: Vec<_> = c
                    .blocks
                    .iter()
                    .map(|b| {
                        let rs: Vec<_> = b
                            .rules
                            .iter()
                            .map(|r| (r.size, r.algorithm, r.faninout, r.segment))
                            .collect();
                        (b.processes, rs)
                    })
                    .collect();
                (c.collective, blocks)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(&back), fields(&rules));
    let parsed = parse_rules(&text);
    for c in Family::Ompi.collectives() {
        let (_, blocks) = parsed
            .collectives
            .iter()
            .find(|(id, _)| *id == i64::from(c.ompi_id()))
            .unwrap();
        for p in [1u64, 2, 3, 5, 8, 64, 1000] {
            for s in [0u64, 1, 100, 5000, 1 << 20, 1 << 30] {
                let ours = back
                    .lookup(c, p, s)
                    .map(|r| [i64::from(r.algorithm), r.faninout as i64, r.segment as i64]);
                assert_eq!(ours, lookup(blocks, p as i64, s as i64), "{c} P {p} S {s}");
            }
        }
    }
}

/// A file Open MPI would reject or misread is a typed error naming the line.
#[test]
fn malformed_rules_files_are_errors() {
    use commcost::export::OmpiRules;
    let ok = "1 # one collective\n7 1\n4 2\n0 6 0 0\n8192 3 0 1024\n";
    let parsed: OmpiRules = ok.parse().unwrap();
    assert_eq!(parsed.collectives[0].blocks[0].rules[1].label, "pipeline");
    for (text, line) in [
        ("1\n7 1\n4 2\n0 6 0 0\n08192 3 0 1024\n", 5), // octal to %li
        ("1\n7 1\n4 2\n1 6 0 0\n8192 3 0 1024\n", 4),  // first size not 0
        ("1\n7 1\n4 2\n0 6 0 0\n8192 10 0 1024\n", 5), // bcast has 9 algorithms
        ("1\n7 1\n4 2\n0 6 0 0\n8192 3 0\n", 5),       // ends early
        ("1\n7 1\n4 1\n0 6 0 0\n8192\n", 5),           // left over
        ("1\n1 1\n4 1\n0 1 0 0\n", 2),                 // allgatherv: not priced
        ("1\n7 2\n4 1\n0 6 0 0\n4 1\n0 6 0 0\n", 5),   // comm sizes not increasing
        ("1\n7 1\n4 2\n0 6 0 0\n0 3 0 0\n", 5),        // message sizes not increasing
        ("1\n7 1\n4 1\n0 six 0 0\n", 4),               // not a number
    ] {
        match text.parse::<OmpiRules>() {
            Err(ExportError::Parse { line: l, .. }) => assert_eq!(l, line, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// With `OnTie::Defer`, a rule says 0 (Open MPI's fixed decision) exactly where at least two
/// allowed candidates with different Open MPI ids cost the same as the cheapest (checked by
/// pricing every candidate here), and elsewhere names the same algorithm as the default export.
fn check_deferral<A: OmpiAlgorithm>(
    deferred: &Parsed,
    plain: &Parsed,
    processes: &[u64],
    sizes: &[u64],
) -> (usize, usize) {
    let model = presets::open_mpi_openib();
    let find = |parsed: &Parsed| {
        parsed
            .collectives
            .iter()
            .find(|(id, _)| *id == i64::from(A::COLLECTIVE.ompi_id()))
            .unwrap()
            .1
            .clone()
    };
    let (d_blocks, p_blocks) = (find(deferred), find(plain));
    let (mut zeros, mut named) = (0, 0);
    for (i, &p) in processes.iter().enumerate() {
        let two_proc_allowed = p == 2 && processes.get(i + 1) == Some(&3);
        let sizes: &[u64] = if A::COLLECTIVE == Collective::Barrier {
            &[0]
        } else {
            sizes
        };
        for &s in sizes {
            let problem = Problem::new(
                p,
                Message::contiguous(A::COLLECTIVE.ompi_problem_bytes(s, p)),
            );
            let costs: Vec<(u32, f64)> = A::candidates(&model, &problem)
                .into_iter()
                .filter(|a| two_proc_allowed || !a.ompi_name().starts_with("two_proc"))
                .map(|a| (a.ompi_id(), a.cost(&model, &problem).unwrap()))
                .collect();
            let cheapest = costs.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
            // distinct Open MPI algorithms among the cheapest (segment-size variants of one
            // algorithm are one)
            let tied = costs
                .iter()
                .filter(|c| c.1 <= cheapest * (1.0 + 1e-9))
                .map(|c| c.0)
                .collect::<BTreeSet<u32>>()
                .len();
            let rule = lookup(&d_blocks, p as i64, s as i64).unwrap();
            if tied > 1 {
                assert_eq!(
                    rule,
                    [0, 0, 0],
                    "{} P {p} S {s}: {tied} tied",
                    A::COLLECTIVE
                );
                zeros += 1;
            } else {
                assert_eq!(
                    Some(rule),
                    lookup(&p_blocks, p as i64, s as i64),
                    "{} P {p} S {s}",
                    A::COLLECTIVE
                );
                named += 1;
            }
        }
    }
    (zeros, named)
}

#[test]
fn deferring_ties_writes_zero_exactly_where_algorithms_tie() {
    let model = presets::open_mpi_openib();
    let processes = [2, 3, 4, 16, 100];
    let sizes: Vec<u64> = (0..24).map(|k| 1u64 << k).collect();
    let options = export::OmpiRulesOptions {
        on_tie: export::OnTie::Defer,
        ..export::OmpiRulesOptions::default()
    };
    let rules = export::ompi_rules(
        &model,
        &Family::Ompi.collectives(),
        &processes,
        &sizes,
        &options,
    )
    .unwrap();
    let text = rules.to_string();
    // the file reads back, through the crate's reader (deferring rules as 0) and an
    // independent one
    let back: export::OmpiRules = text.parse().unwrap();
    assert_eq!(
        back.lookup(Collective::Bcast, 2, 8).map(|r| r.algorithm),
        Some(0)
    );
    let deferred = parse_rules(&text);
    check_invariants_from(&deferred, 0);
    let plain = parse_rules(
        &export::ompi_rules(
            &model,
            &Family::Ompi.collectives(),
            &processes,
            &sizes,
            &Default::default(),
        )
        .unwrap()
        .to_string(),
    );
    let mut totals = (0, 0);
    for (z, n) in [
        check_deferral::<ompi::Bcast>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Allreduce>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Reduce>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Allgather>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Alltoall>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Barrier>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::ReduceScatter>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Gather>(&deferred, &plain, &processes, &sizes),
        check_deferral::<ompi::Scatter>(&deferred, &plain, &processes, &sizes),
    ] {
        totals = (totals.0 + z, totals.1 + n);
    }
    // both kinds occur: on 2 processes a broadcast is one message whatever the algorithm
    // (every bcast algorithm sends the root's buffer to rank 1), on 100 the model prefers one
    assert!(totals.0 > 0 && totals.1 > 0, "{totals:?}");
    let bcast_2 = rules.lookup(Collective::Bcast, 2, 8).unwrap();
    assert_eq!(bcast_2.algorithm, 0);
}
