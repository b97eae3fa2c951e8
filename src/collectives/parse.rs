//! Parsing of algorithm names, shared by the textbook and the Open MPI algorithms: `name` or
//! `name:key=value,key=value`, case-insensitive, `_` and spaces read as `-`.

use crate::collectives::AlgorithmParseError;

/// Lower case, `_` and spaces as `-`.
pub(crate) fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '_' | ' ' => '-',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Parses the name of an algorithm without parameters, or its 1-based Open MPI ID, against
/// `names` (in ID order) and `all` (the algorithms in the same order).
pub(crate) fn parse_plain<T: Copy>(
    s: &str,
    collective: &'static str,
    names: &'static [&'static str],
    all: &[T],
) -> Result<T, AlgorithmParseError> {
    let p = ParsedName::parse(s)?;
    let a = names
        .iter()
        .position(|n| *n == p.name)
        .or_else(|| {
            p.name
                .parse::<usize>()
                .ok()
                .and_then(|id| id.checked_sub(1))
        })
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| p.unknown(collective, names))?;
    p.finish()?;
    Ok(a)
}

/// An algorithm written as `name` or `name:key=value,key=value`.
pub(crate) struct ParsedName {
    /// The normalised name.
    pub(crate) name: String,
    original: String,
    params: Vec<(String, u64)>,
}

impl ParsedName {
    /// Splits and checks the syntax (numbers, no repeated keys).
    pub(crate) fn parse(s: &str) -> Result<Self, AlgorithmParseError> {
        let (name, rest) = match s.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (s, None),
        };
        let bad = |detail: String| AlgorithmParseError::Parameter {
            algorithm: s.to_string(),
            detail,
        };
        let mut params: Vec<(String, u64)> = Vec::new();
        if let Some(rest) = rest {
            for item in rest.split(',').filter(|i| !i.trim().is_empty()) {
                let (key, value) = item
                    .split_once('=')
                    .ok_or_else(|| bad(format!("`{item}` is not key=value")))?;
                let key = normalise(key);
                let value: u64 = value
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("`{key}` = `{value}` is not an unsigned integer")))?;
                if params.iter().any(|(k, _)| *k == key) {
                    return Err(bad(format!("`{key}` given twice")));
                }
                params.push((key, value));
            }
        }
        Ok(Self {
            name: normalise(name),
            original: s.to_string(),
            params,
        })
    }

    /// Removes and returns parameter `key`.
    pub(crate) fn take(&mut self, key: &str) -> Option<u64> {
        let i = self.params.iter().position(|(k, _)| k == key)?;
        Some(self.params.remove(i).1)
    }

    /// Removes parameter `key`, which must be present.
    pub(crate) fn require(&mut self, key: &str) -> Result<u64, AlgorithmParseError> {
        self.take(key)
            .ok_or_else(|| AlgorithmParseError::Parameter {
                algorithm: self.original.clone(),
                detail: format!("missing parameter `{key}`"),
            })
    }

    /// Fails on parameters left over (unknown to the algorithm).
    pub(crate) fn finish(self) -> Result<(), AlgorithmParseError> {
        match self.params.first() {
            None => Ok(()),
            Some((k, _)) => Err(AlgorithmParseError::Parameter {
                algorithm: self.original,
                detail: format!("unknown parameter `{k}`"),
            }),
        }
    }

    /// The error for a name no algorithm has.
    pub(crate) fn unknown(&self, collective: &'static str, known: &[&str]) -> AlgorithmParseError {
        AlgorithmParseError::Unknown {
            collective,
            name: self.original.clone(),
            known: known.join(", "),
        }
    }
}
