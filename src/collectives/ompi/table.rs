//! The one declaration of each Open MPI algorithm list ([`ompi_algorithms!`]): Open MPI's ID,
//! the variant with its parameters, the crate's kebab-case name and Open MPI's name, from which
//! the names, `ALL`, [`OmpiAlgorithm::ompi_id`](super::OmpiAlgorithm::ompi_id),
//! [`OmpiAlgorithm::ompi_name`](super::OmpiAlgorithm::ompi_name), `FromStr`, `Display` and
//! the [`Algorithm`](crate::collectives::Algorithm) methods common to every Open MPI
//! collective follow.

use std::fmt;

/// Writes `name` and its parameters as `name:key=value,key=value` (`name` alone without any).
pub(super) fn write_name(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    params: &[(&str, u64)],
) -> fmt::Result {
    f.write_str(name)?;
    for (i, (key, value)) in params.iter().enumerate() {
        let separator = if i == 0 { ':' } else { ',' };
        write!(f, "{separator}{key}={value}")?;
    }
    Ok(())
}

/// Declares an Open MPI algorithm list once and implements from it: `NAMES` (kebab-case, in ID
/// order), [`OmpiAlgorithm`](super::OmpiAlgorithm) (`COLLECTIVE`, `ompi_id`, `ompi_name`,
/// `local_work` = the type's `local_work_of`, plus the items given in `impl OmpiAlgorithm { … }`), [`Algorithm`](crate::collectives::Algorithm)
/// (`name`, `label` = `Display`, `cost` = the type's `messages_cost` plus the price of its local
/// work, plus the items given in `impl Algorithm { … }`: `candidates`), `kebab_name`, `FromStr`
/// and `Display`. IDs must be `1, 2, …` in order (checked at compile time); a variant missing
/// from the list fails to compile (the matches are exhaustive).
///
/// Two forms:
///
/// * `plain Type, Collective; ID Variant => "kebab", "ompi_name"; … impl …` for
///   algorithms without parameters: also `pub const ALL` (every algorithm, in ID order); a name
///   or any number that parses as the ID is accepted (`parse_plain`).
/// * `Type, Collective; [ignore: ["key", …];] ID Variant { field: "key" = default, … }
///   => "kebab", "ompi_name"; … impl …`: a variant reads its parameters (unsigned integers,
///   `default` when absent) and writes them in the order declared; the name or the ID written
///   as a plain decimal is accepted; the `ignore` keys are accepted and dropped for every
///   variant that does not read them.
macro_rules! ompi_algorithms {
    (
        plain $ty:ident, $collective:ident;
        $( $id:literal $variant:ident => $kebab:literal, $ompi:literal; )+
        impl OmpiAlgorithm { $($extra:tt)* }
        impl Algorithm { $($candidates:tt)* }
    ) => {
        impl $ty {
            /// Every algorithm, in ID order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::collectives::AlgorithmParseError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $crate::collectives::parse::parse_plain(
                    s,
                    $crate::collectives::Collective::$collective.name(),
                    Self::NAMES,
                    Self::ALL,
                )
            }
        }

        $crate::collectives::ompi::table::ompi_algorithms!(
            @common $ty, $collective; $( $id $variant {} => $kebab, $ompi; )+ impl OmpiAlgorithm { $($extra)* }
            impl Algorithm { $($candidates)* }
        );
    };
    (
        $ty:ident, $collective:ident;
        $( ignore: [$($ignored:literal),* $(,)?]; )?
        $(
            $id:literal $variant:ident $({ $($field:ident : $key:literal = $default:expr),* $(,)? })?
                => $kebab:literal, $ompi:literal;
        )+
        impl OmpiAlgorithm { $($extra:tt)* }
        impl Algorithm { $($candidates:tt)* }
    ) => {
        impl std::str::FromStr for $ty {
            type Err = $crate::collectives::AlgorithmParseError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let mut p = $crate::collectives::parse::ParsedName::parse(s)?;
                let a = match p.name.as_str() {
                    $(
                        $kebab | stringify!($id) => Self::$variant {
                            $($($field: p.take($key).unwrap_or($default)),*)?
                        },
                    )+
                    _ => {
                        return Err(p.unknown(
                            $crate::collectives::Collective::$collective.name(),
                            Self::NAMES,
                        ));
                    }
                };
                $($( let _ = p.take($ignored); )*)?
                p.finish()?;
                Ok(a)
            }
        }

        $crate::collectives::ompi::table::ompi_algorithms!(
            @common $ty, $collective;
            $( $id $variant { $($($field : $key),*)? } => $kebab, $ompi; )+
            impl OmpiAlgorithm { $($extra)* }
            impl Algorithm { $($candidates)* }
        );
    };
    (
        @common $ty:ident, $collective:ident;
        $( $id:literal $variant:ident { $($field:ident : $key:literal),* } => $kebab:literal, $ompi:literal; )+
        impl OmpiAlgorithm { $($extra:tt)* }
        impl Algorithm { $($candidates:tt)* }
    ) => {
        const _: () = {
            let ids: &[u32] = &[$($id),+];
            let mut i = 0;
            while i < ids.len() {
                assert!(ids[i] as usize == i + 1, "Open MPI IDs must be 1, 2, ... in order");
                i += 1;
            }
        };

        impl $ty {
            /// The crate's names (kebab-case), in ID order.
            pub(crate) const NAMES: &'static [&'static str] = &[$($kebab),+];

            /// The crate's name of the algorithm (kebab-case, without parameters).
            fn kebab_name(&self) -> &'static str {
                match self {
                    $( Self::$variant { .. } => $kebab, )+
                }
            }
        }

        impl $crate::collectives::ompi::OmpiAlgorithm for $ty {
            const COLLECTIVE: $crate::collectives::Collective =
                $crate::collectives::Collective::$collective;

            fn ompi_id(&self) -> u32 {
                match self {
                    $( Self::$variant { .. } => $id, )+
                }
            }

            fn ompi_name(&self) -> &'static str {
                match self {
                    $( Self::$variant { .. } => $ompi, )+
                }
            }

            fn local_work(&self, processes: u64, bytes: u64) -> $crate::collectives::Copies {
                self.local_work_of(processes, bytes)
            }

            $($extra)*
        }

        impl $crate::collectives::Algorithm for $ty {
            fn name(&self) -> &'static str {
                self.kebab_name()
            }

            fn label(&self) -> String {
                self.to_string()
            }

            fn cost(
                &self,
                model: &dyn $crate::CommModel,
                problem: &$crate::collectives::Problem,
            ) -> Result<f64, $crate::collectives::CollectiveError> {
                let messages = self.messages_cost(model, problem)?;
                if problem.local.is_free() {
                    return Ok(messages);
                }
                let work = $crate::collectives::ompi::OmpiAlgorithm::local_work(
                    self,
                    problem.processes,
                    problem.message.bytes(),
                );
                Ok(messages + problem.local.price(&work) + problem.local.calls().of(self))
            }

            $($candidates)*
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match *self {
                    $(
                        Self::$variant { $($field),* } => $crate::collectives::ompi::table::write_name(
                            f,
                            $kebab,
                            &[$(($key, $field)),*],
                        ),
                    )+
                }
            }
        }
    };
}
pub(crate) use ompi_algorithms;
