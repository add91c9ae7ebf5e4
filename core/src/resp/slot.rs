//! Redis Cluster's key slots: CRC16 of a key's hash tag (or of the whole key), and a short hash
//! tag for every slot.

/// Number of hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), as Redis uses for key slots.
const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC16: [u16; 256] = crc16_table();

/// CRC16 (XMODEM) of `bytes`.
#[inline]
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc = (crc << 8) ^ CRC16[((crc >> 8) as u8 ^ b) as usize];
    }
    crc
}

/// The part of `key` that is hashed: the hash tag between the first `{` and the first `}`
/// after it, when that is not empty; else the whole key (Redis' rules).
#[inline]
pub fn hash_part(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The hash slot (0..16383) of `key`.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_part(key)) & (SLOTS as u16 - 1)
}

/// A hash tag of `slot`, braces included (`{a7}`): the shortest text of letters and digits
/// that hashes to it, as redis-benchmark's table of tags gives (found once per process: about
/// 240,000 CRCs of one to three bytes cover every slot).
pub fn slot_tag(slot: u16) -> &'static [u8] {
    static TAGS: std::sync::OnceLock<Box<[Box<[u8]>]>> = std::sync::OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let mut tags: Vec<Option<Box<[u8]>>> = vec![None; SLOTS];
        let (mut left, mut len) = (SLOTS, 1u32);
        while left > 0 {
            for n in 0..(ALPHABET.len() as u64).pow(len) {
                let mut text = vec![b'{'];
                let mut m = n;
                for _ in 0..len {
                    text.push(ALPHABET[(m % ALPHABET.len() as u64) as usize]);
                    m /= ALPHABET.len() as u64;
                }
                let at = key_slot(&text[1..]) as usize;
                if tags[at].is_none() {
                    text.push(b'}');
                    tags[at] = Some(text.into());
                    left -= 1;
                }
            }
            len += 1;
        }
        tags.into_iter().map(Option::unwrap_or_default).collect()
    });
    &tags[slot as usize % SLOTS]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_has_a_short_tag_that_hashes_to_it() {
        for slot in 0..SLOTS as u16 {
            let tag = slot_tag(slot);
            assert!((3..=5).contains(&tag.len()), "{slot}: {tag:?}");
            assert_eq!((tag[0], tag[tag.len() - 1]), (b'{', b'}'));
            assert_eq!(key_slot(tag), slot);
            let mut key = b"key".to_vec();
            key.extend_from_slice(tag);
            key.extend_from_slice(b":000000000042");
            assert_eq!(key_slot(&key), slot);
        }
    }

    #[test]
    fn known_slots() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"123456789"), 12739);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"key:0"), 2592);
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        // An empty tag hashes the whole key; only the first `{` and the first `}` after it count.
        assert_eq!(hash_part(b"foo{}{bar}"), b"foo{}{bar}");
        assert_eq!(hash_part(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_part(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_part(b"foo}{bar"), b"foo}{bar");
        assert_eq!(key_slot(b""), 0);
    }
}
