//! Deterministic chat content for `flashback-bench storage-db`: a seeded generator of ids, text,
//! timestamps, base64 PNG data URLs and LangChain messages (built in the JSON view and turned
//! into stored values with the codec's `from_view`, as an edit would be).

use base64::Engine;
use flashback_codec::unview::from_view;
use flashback_codec::Value;
use serde_json::{json, Value as Json};

/// SplitMix64: small, fast, and the same sequence everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.next_u64().is_multiple_of(n)
    }

    /// `random.random()`: 53 bits in `[0, 1)`.
    pub fn float(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A version-4 UUID string.
    pub fn uuid4(&mut self) -> String {
        let (a, b) = (self.next_u64(), self.next_u64());
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | ((b >> 48) & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    /// An OpenAI-style tool call id.
    pub fn call_id(&mut self) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut s = String::from("call_");
        for _ in 0..24 {
            s.push(ALPHABET[(self.next_u64() % ALPHABET.len() as u64) as usize] as char);
        }
        s
    }

    fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        while out.len() + 8 <= n {
            out.extend_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = self.next_u64().to_le_bytes();
        out.extend_from_slice(&tail[..n - out.len()]);
    }
}

const WORDS: &str =
    "the model returns a summary of quarterly revenue and customer churn for each region \
    with notes on pricing changes please check whether invoice totals match ledger entries \
    before closing month report shows growth in enterprise accounts but lower retention \
    among small teams which suggests onboarding needs work also compare against last year \
    forecast highlight anomalies table chart draft email to finance team explaining \
    differences clearly";

/// About `chars` characters of sentence-like text.
pub fn text(rng: &mut Rng, chars: usize) -> String {
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut s = String::with_capacity(chars + 16);
    let mut sentence = 0;
    while s.len() < chars {
        let w = words[(rng.next_u64() % words.len() as u64) as usize];
        if sentence == 0 {
            let mut c = w.chars();
            if let Some(first) = c.next() {
                s.extend(first.to_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push_str(w);
        }
        sentence += 1;
        if sentence > 6 && rng.one_in(8) {
            s.push_str(". ");
            sentence = 0;
        } else {
            s.push(' ');
        }
    }
    s.truncate(s.trim_end().len());
    s.push('.');
    s
}

/// The system prompt every thread starts with (the same text in every thread: ~3.5 KB).
pub fn system_prompt() -> String {
    let mut rng = Rng::new(0x0515_7E11);
    format!(
        "You are Ledger, the finance assistant of Example Corp. {} Always answer in Markdown \
         and cite the tool results you used.",
        text(&mut rng, 3400)
    )
}

/// A PNG data URL of `bytes` raw bytes (a valid signature and IHDR, then seeded noise, which
/// compresses as badly as real image data).
pub fn png_data_url(rng: &mut Rng, bytes: usize) -> String {
    let mut png = Vec::with_capacity(bytes);
    png.extend_from_slice(b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR");
    png.extend_from_slice(&(640u32 + (rng.next_u64() % 640) as u32).to_be_bytes());
    png.extend_from_slice(&(480u32 + (rng.next_u64() % 480) as u32).to_be_bytes());
    png.extend_from_slice(b"\x08\x06\x00\x00\x00");
    let n = bytes.max(png.len());
    rng.fill(&mut png, n);
    let mut url = String::from("data:image/png;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(&png, &mut url);
    url
}

/// A message from its JSON view (`$type` + the pydantic fields, as `docs/json-view.md` shows
/// them), as stored: ext 5 with `model_validate_json`.
fn message(view: Json) -> Value {
    from_view(&view, None).unwrap_or_else(|e| panic!("bench message does not unview: {e}"))
}

pub fn system(id: &str, content: &str) -> Value {
    message(json!({
        "$type": "langchain_core.messages.system.SystemMessage",
        "content": content, "additional_kwargs": {}, "response_metadata": {},
        "type": "system", "name": null, "id": id,
    }))
}

/// A human message; with an image, its content is a text part and an `image_url` part.
pub fn human(id: &str, content: String, image: Option<String>) -> Value {
    let content = match image {
        None => Json::String(content),
        Some(url) => json!([
            {"type": "text", "text": content},
            {"type": "image_url", "image_url": {"url": url}},
        ]),
    };
    message(json!({
        "$type": "langchain_core.messages.human.HumanMessage",
        "content": content, "additional_kwargs": {}, "response_metadata": {},
        "type": "human", "name": null, "id": id,
    }))
}

/// A tool call: `(name, args, id)`.
pub type ToolCall = (&'static str, Json, String);

/// An AI message: a text answer, or (with `tool_calls`) an empty content and the calls.
pub fn ai(id: &str, content: String, tool_calls: &[ToolCall], tokens: (usize, usize)) -> Value {
    let calls: Vec<Json> = tool_calls
        .iter()
        .map(|(name, args, id)| json!({"name": name, "args": args, "id": id, "type": "tool_call"}))
        .collect();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    message(json!({
        "$type": "langchain_core.messages.ai.AIMessage",
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {
            "token_usage": {"completion_tokens": tokens.1, "prompt_tokens": tokens.0,
                            "total_tokens": tokens.0 + tokens.1},
            "model_name": "gpt-4o-2024-08-06", "system_fingerprint": "fp_7f6be3efb0",
            "finish_reason": finish, "logprobs": null,
        },
        "type": "ai", "name": null, "id": id,
        "tool_calls": calls, "invalid_tool_calls": [],
        "usage_metadata": {"input_tokens": tokens.0, "output_tokens": tokens.1,
                           "total_tokens": tokens.0 + tokens.1},
    }))
}

pub fn tool(id: &str, name: &str, call_id: &str, content: String) -> Value {
    message(json!({
        "$type": "langchain_core.messages.tool.ToolMessage",
        "content": content, "additional_kwargs": {}, "response_metadata": {},
        "type": "tool", "name": name, "id": id, "tool_call_id": call_id,
        "artifact": null, "status": "success",
    }))
}

/// `datetime.isoformat()` of a UTC time given in microseconds since the Unix epoch.
pub fn iso(us: u64) -> String {
    flashback_storage::pyfmt::isoformat_utc((us / 1_000_000) as i64, (us % 1_000_000) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(
            iso(0),
            "1970-01-01T00:00:00+00:00",
            "Python leaves out a zero fraction"
        );
        assert_eq!(
            iso(1_735_689_600_000_000 + 86_400_000_000 * 59 + 3_723_000_042),
            "2025-03-01T01:02:03.000042+00:00"
        );
    }

    #[test]
    fn messages_unview_as_ext5() {
        let mut rng = Rng::new(1);
        let url = png_data_url(&mut rng, 1000);
        assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"));
        let h = human("h", "hello".into(), Some(url));
        assert!(matches!(h, Value::Object(_)));
        let bytes = flashback_codec::msgpack::encode(&h);
        assert_eq!(bytes[0] & 0xf0, 0xc0, "an ext value");
    }
}
