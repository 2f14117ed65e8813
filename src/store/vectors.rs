//! The embedding model's vectors as the stores keep them (docs/architecture.md §10):
//! little-endian f32s in a BLOB beside the text they were made from, compared by their dot
//! product (the model's vectors have unit length, so that is their cosine). One form for
//! memories and document passages alike.

/// A vector as stored.
pub fn to_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored vector read back; trailing bytes short of a whole f32 are ignored.
pub fn from_bytes(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// The dot product of a stored vector with `query` (both unit length: their cosine); none
/// when the lengths differ (another model made one of them).
pub fn dot(stored: &[f32], query: &[f32]) -> Option<f32> {
    (stored.len() == query.len()).then(|| stored.iter().zip(query).map(|(a, b)| a * b).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_round_trips_and_only_vectors_of_one_length_compare() {
        let vector = [0.6_f32, -0.8, 0.0];
        assert_eq!(from_bytes(&to_bytes(&vector)), vector);
        assert_eq!(dot(&vector, &vector), Some(1.0));
        assert_eq!(dot(&vector, &[1.0, 0.0]), None);
    }
}
