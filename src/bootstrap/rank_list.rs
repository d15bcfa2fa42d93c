//! Rank lists such as `0,2,4-7`: how `OXMPI_PSETS` and PMIx's
//! `PMIX_LOCAL_PEERS` name processes of a job.
use super::ProcessId;

/// Parses a rank list such as `0,2,4-7`.
pub fn parse(text: &str, size: u32) -> Result<Vec<ProcessId>, String> {
    let mut ranks = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: u32 = a
            .parse()
            .map_err(|_| format!("'{part}' is not a rank or range"))?;
        let b: u32 = b
            .parse()
            .map_err(|_| format!("'{part}' is not a rank or range"))?;
        if a > b || b >= size {
            return Err(format!("'{part}' is not within 0..{size}"));
        }
        for r in a..=b {
            if !ranks.contains(&r) {
                ranks.push(r);
            }
        }
    }
    Ok(ranks)
}
