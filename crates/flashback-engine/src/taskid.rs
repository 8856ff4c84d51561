//! Task and interrupt ids, recomputed the way `langgraph.pregel._algo` does.
//!
//! `task_id = H(cid_bytes + part₀ + part₁ + …)` with no separators, where `cid_bytes` is the 16
//! raw bytes of the checkpoint uuid and `H` is XXH3-128 for checkpoints with `v > 1` and SHA-1
//! (truncated to 128 bits) for `v = 1`; the digest is formatted 8-4-4-4-12.

use xxhash_rust::xxh3::xxh3_128;

pub use flashback_codec::reserved::{PULL, PUSH};

/// The raw bytes of a checkpoint id (`binascii.unhexlify(id.replace("-", ""))`), or `None`
/// when the id is not hex.
pub fn checkpoint_id_bytes(checkpoint_id: &str) -> Option<Vec<u8>> {
    let hex: Vec<u8> = checkpoint_id.bytes().filter(|&b| b != b'-').collect();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

fn uuid_format(hex: &str) -> String {
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Python's `_xxhash_str` (`v > 1`) or `_uuid5_str` (`v = 1`) over a checkpoint id and parts.
/// `None` when the checkpoint id is not hex.
pub fn task_id(checkpoint_v: i64, checkpoint_id: &str, parts: &[&str]) -> Option<String> {
    let mut data = checkpoint_id_bytes(checkpoint_id)?;
    for p in parts {
        data.extend_from_slice(p.as_bytes());
    }
    let hex = if checkpoint_v > 1 {
        format!("{:032x}", xxh3_128(&data))
    } else {
        sha1(&data).iter().map(|b| format!("{b:02x}")).collect()
    };
    Some(uuid_format(&hex))
}

/// The id of a PULL task: parts `task_ns, str(step), name, "__pregel_pull", *sorted(triggers)`.
pub fn pull_task_id(
    checkpoint_v: i64,
    checkpoint_id: &str,
    task_ns: &str,
    step: i64,
    name: &str,
    sorted_triggers: &[String],
) -> Option<String> {
    let step = step.to_string();
    let mut parts = vec![task_ns, step.as_str(), name, PULL];
    parts.extend(sorted_triggers.iter().map(String::as_str));
    task_id(checkpoint_v, checkpoint_id, &parts)
}

/// The id of a PUSH (`Send`) task: parts `task_ns, str(step), name, "__pregel_push", str(idx)`.
pub fn push_task_id(
    checkpoint_v: i64,
    checkpoint_id: &str,
    task_ns: &str,
    step: i64,
    name: &str,
    idx: usize,
) -> Option<String> {
    let (step, idx) = (step.to_string(), idx.to_string());
    task_id(
        checkpoint_v,
        checkpoint_id,
        &[task_ns, &step, name, PUSH, &idx],
    )
}

/// LangGraph.js's task id: `uuid5(JSON.stringify(parts), checkpoint_id)`, where `parts` is
/// `[task_ns, String(step), name, "__pregel_pull", [trigger]]` for a PULL task (the first
/// trigger that fired) and `[task_ns, String(step), node, "__pregel_push", String(idx)]` for a
/// `Send`. `None` when the checkpoint id is not hex.
pub fn js_task_id(checkpoint_id: &str, parts: &serde_json::Value) -> Option<String> {
    let mut data = checkpoint_id_bytes(checkpoint_id)?;
    if data.len() != 16 {
        return None;
    }
    data.extend_from_slice(parts.to_string().as_bytes());
    let mut h: [u8; 16] = sha1(&data)[..16].try_into().ok()?;
    h[6] = (h[6] & 0x0f) | 0x50;
    h[8] = (h[8] & 0x3f) | 0x80;
    let hex: String = h.iter().map(|b| format!("{b:02x}")).collect();
    Some(uuid_format(&hex))
}

/// The id of an interrupt raised by a task (`langgraph.types._interrupt_id`): the XXH3-128 hex
/// digest of the task's namespace (`"<ns|>name:task_id"`), suffixed `|answered` when the task
/// already has answers.
pub fn interrupt_id(task_checkpoint_ns: &str, answered: usize) -> String {
    let text = if answered > 0 {
        format!("{task_checkpoint_ns}|{answered}")
    } else {
        task_checkpoint_ns.to_owned()
    };
    format!("{:032x}", xxh3_128(text.as_bytes()))
}

/// SHA-1 (FIPS 180-1), only for the task ids of v1 checkpoints.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha1_test_vectors() {
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(&sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(hex(&sha1(long)), "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    }

    #[test]
    fn js_task_ids_are_uuid5_of_the_json_parts() {
        // From tests/js-fixtures (send-fanout): the input checkpoint's `__start__` task and
        // the first of the three Sends.
        let start = serde_json::json!(["__start__", "0", "__start__", PULL, ["__start__"]]);
        assert_eq!(
            js_task_id("1f1e9a8b-f0f8-6940-ffff-d5e2c59d259b", &start).as_deref(),
            Some("652fed43-c6ee-522c-9759-c2b3da32628c")
        );
        let send = serde_json::json!(["work", "2", "work", PUSH, "0"]);
        assert_eq!(
            js_task_id("1f1e9a8b-f10c-61c0-8001-aaad88b55733", &send).as_deref(),
            Some("a2b50a0d-58e7-5222-9d75-48fcd901a6f1")
        );
    }

    #[test]
    fn checkpoint_bytes() {
        let b = checkpoint_id_bytes("1f1e63f4-36ab-6ea4-8001-3edc500fd290").unwrap();
        assert_eq!(hex(&b), "1f1e63f436ab6ea480013edc500fd290");
        assert!(checkpoint_id_bytes("not-a-uuid").is_none());
    }
}
