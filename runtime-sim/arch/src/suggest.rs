//! "Did you mean" suggestions for misspelt names, on the distances of the `strsim` crate,
//! for the compiler's diagnostics and the simulator's tools alike.
//!
//! Two policies, kept as their users had them (the compiler's diagnostics are pinned by the
//! ui snapshots):
//!
//! * [`did_you_mean`] (CSL): optimal string alignment distance, so that a swap of two
//!   adjacent characters is one edit, within a third of the longer name;
//! * [`closest`] (Tungsten, and the `miset`/`miget`/`simfabric` option names): Levenshtein
//!   distance within a fixed number of edits.

/// The closest candidate to `name` by optimal string alignment distance (insertions,
/// deletions, substitutions and swaps of two adjacent characters each cost one), if it is
/// within a third of the longer name's length (at least one edit); the alphabetically
/// first of equally close ones.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = strsim::osa_distance(name, c);
        let limit = (name.len().max(c.len()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

/// The candidate closest to `name` by Levenshtein distance, if at most `max` edits away;
/// the first in `candidates`' order of equally close ones.
pub fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, _)| *d <= max)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("reslt", ["result", "res", "x"]),
            Some("result".into())
        );
        assert_eq!(did_you_mean("zzz", ["result"]), None);
        assert_eq!(
            did_you_mean("esat", ["north", "east", "west"]),
            Some("east".into())
        );
        assert_eq!(closest("esat", ["north", "east", "west"], 2), Some("east"));
        assert_eq!(closest("kitten", ["sitting"], 2), None);
        assert_eq!(closest("kitten", ["sitting"], 3), Some("sitting"));
    }
}
