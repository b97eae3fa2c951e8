//! The `--mpirun` launcher prefix: split into words as a shell splits quotes, with what the
//! measurement needs to know of it (does it choose the BTLs, how many processes).

use crate::{Failure, fail};

/// The launcher: its words, whether it sets the BTLs, and its process count when it says.
pub(crate) struct Launcher {
    pub words: Vec<String>,
    pub sets_btl: bool,
    pub procs: Option<u64>,
}

impl Launcher {
    /// Whether `--mca btl self,vader` should be added: the launcher is `mpirun`, `mpiexec` or
    /// `orterun` itself (a wrapper script such as `scripts/cluster-emu.sh mpirun --` chooses its
    /// own transports) and names no `--mca btl`.
    pub(crate) fn adds_default_btl(&self) -> bool {
        let plain = std::path::Path::new(&self.words[0])
            .file_name()
            .is_some_and(|n| matches!(n.to_str(), Some("mpirun" | "mpiexec" | "orterun")));
        plain && !self.sets_btl
    }
}

/// Splits a command line into words as a POSIX shell does for quotes: white space separates
/// words, `'...'` and `"..."` keep their content (spaces included) in one word, `\\` escapes
/// the next character outside single quotes. No variables, globs or other expansions.
fn split_words(text: &str) -> Result<Vec<String>, Failure> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(q) => word.push(q),
                        None => return fail("--mpirun: a single quote is not closed"),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e) => word.push(e),
                            None => return fail("--mpirun: a double quote is not closed"),
                        },
                        Some(q) => word.push(q),
                        None => return fail("--mpirun: a double quote is not closed"),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

pub(crate) fn parse_launcher(text: &str) -> Result<Launcher, Failure> {
    let words = split_words(text)?;
    if words.is_empty() || words.len() > 256 {
        return fail("--mpirun: give the launcher command (e.g. `mpirun -np 2`)");
    }
    let sets_btl = words
        .windows(2)
        .any(|w| matches!(w[0].as_str(), "--mca" | "-mca") && w[1] == "btl");
    let procs = words
        .windows(2)
        .find(|w| matches!(w[0].as_str(), "-np" | "-n" | "--np" | "-c"))
        .and_then(|w| w[1].parse::<u64>().ok());
    Ok(Launcher {
        words,
        sets_btl,
        procs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_words_keep_quoted_spaces() {
        let w = split_words(
            r#"mpirun -np 2 --mca plm_rsh_agent "/x/cluster-emu.sh rsh-cc" -x 'A B' C\ D"#,
        )
        .unwrap();
        assert_eq!(
            w,
            [
                "mpirun",
                "-np",
                "2",
                "--mca",
                "plm_rsh_agent",
                "/x/cluster-emu.sh rsh-cc",
                "-x",
                "A B",
                "C D"
            ]
        );
        assert_eq!(split_words("  a   b ").unwrap(), ["a", "b"]);
        assert_eq!(split_words(r#"a "" b"#).unwrap(), ["a", "", "b"]);
        assert!(split_words("a 'b").is_err());
        assert!(split_words("a \"b").is_err());
    }
}
