//! OpenAI's audio routes as speech providers serve them: `/v1/audio/transcriptions` takes a
//! WAV file in a `multipart/form-data` body and answers `{"text"}`, `/v1/audio/speech` takes
//! `{"model","input","voice","response_format":"wav"}` and answers a WAV file. What is
//! "heard" says how long the recording was, so a test can tell the audio arrived whole;
//! what is "read" is a tone a quarter second per word.

use serde_json::{Map, Value, json};

/// The form's fields as JSON (the file as its size and, when it is a WAV file, its length
/// in seconds), or why the body is not a form.
pub(crate) fn form_fields(content_type: &str, body: &[u8]) -> Result<Value, String> {
    let boundary = content_type
        .split(';')
        .find_map(|part| part.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"'))
        .ok_or("the body is not multipart/form-data with a boundary")?;
    let delimiter = format!("--{boundary}");
    let mut fields = Map::new();
    for part in split(body, delimiter.as_bytes()).into_iter().skip(1) {
        if part.starts_with(b"--") {
            break;
        }
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let Some(end) = find(part, b"\r\n\r\n") else { return Err("a part has no headers".into()) };
        let (head, content) = (String::from_utf8_lossy(&part[..end]), &part[end + 4..]);
        let name = head
            .split(';')
            .find_map(|p| p.trim().strip_prefix("name=\""))
            .and_then(|n| n.split('"').next())
            .ok_or("a part has no name")?;
        if head.contains("filename=") {
            fields.insert(format!("{name}_bytes"), json!(content.len()));
            fields.insert(format!("{name}_seconds"), json!(wav_seconds(content)));
        } else {
            fields.insert(name.to_owned(), json!(String::from_utf8_lossy(content)));
        }
    }
    Ok(Value::Object(fields))
}

/// How long a PCM WAV file lasts, if it is one.
fn wav_seconds(bytes: &[u8]) -> Option<f64> {
    if bytes.len() < 44 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return None;
    }
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let (channels, rate, bits) = (u16_at(22), u32_at(24), u16_at(34));
    let data = find(bytes, b"data")?;
    let length = u32_at(data + 4) as usize;
    let frame = usize::from(channels) * usize::from(bits / 8);
    (frame > 0 && rate > 0).then(|| (length / frame) as f64 / f64::from(rate))
}

/// What the scripted provider "heard".
pub(crate) fn heard(fields: &Value) -> String {
    match fields["file_seconds"].as_f64() {
        Some(seconds) => format!("scripted transcript of {seconds:.1} seconds"),
        None => String::new(),
    }
}

/// `input` "read aloud": a 440 Hz tone a quarter second per word, 16-bit mono at 22,050 Hz.
pub(crate) fn read_aloud(input: &str) -> Vec<u8> {
    const RATE: u32 = 22_050;
    let words = input.split_whitespace().count().max(1);
    let samples = RATE as usize * words / 4;
    let mut out = Vec::with_capacity(44 + samples * 2);
    let data = (samples * 2) as u32;
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    for field in [16u32.to_le_bytes().as_slice(), &1u16.to_le_bytes(), &1u16.to_le_bytes()] {
        out.extend_from_slice(field);
    }
    out.extend_from_slice(&RATE.to_le_bytes());
    out.extend_from_slice(&(RATE * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for i in 0..samples {
        let phase = i as f64 * 440.0 * std::f64::consts::TAU / f64::from(RATE);
        out.extend_from_slice(&((phase.sin() * 0.3 * 32_767.0) as i16).to_le_bytes());
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn split<'a>(mut body: &'a [u8], delimiter: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    while let Some(at) = find(body, delimiter) {
        parts.push(&body[..at]);
        body = &body[at + delimiter.len()..];
    }
    parts.push(body);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_with_a_wav_file_is_read_and_speech_is_a_tone_per_word() {
        let wav = read_aloud("one two three four");
        let mut body = b"--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n".to_vec();
        body.extend_from_slice(b"--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n");
        body.extend_from_slice(b"Content-Type: audio/wav\r\n\r\n");
        body.extend_from_slice(&wav);
        body.extend_from_slice(b"\r\n--xyz--\r\n");
        let fields = form_fields("multipart/form-data; boundary=xyz", &body).unwrap();
        assert_eq!(fields["model"], "whisper-1");
        assert_eq!(fields["file_bytes"], wav.len());
        assert_eq!(heard(&fields), "scripted transcript of 1.0 seconds");
        assert!(form_fields("application/json", b"{}").is_err());
    }
}
