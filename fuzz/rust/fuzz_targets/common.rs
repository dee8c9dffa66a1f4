// Shared by the targets: cut points derived from the input, and an allocation bound.

/// The input's bytes after its first two, cut at a point the first two bytes choose: the
/// whole, and two pieces.
pub fn split(data: &[u8]) -> Option<(&[u8], usize)> {
    let (head, body) = data.split_first()?;
    let cut =
        (*head as usize * 257 + data.get(1).copied().unwrap_or(0) as usize) % (body.len() + 1);
    Some((body, cut))
}
