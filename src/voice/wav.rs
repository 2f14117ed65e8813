//! Audio as the page sends it: a WAV file of PCM — 8 to 48 kHz, mono or stereo, 8/16/24/32-bit
//! integers or 32-bit floats — made into what Whisper listens to: one channel of f32 at
//! 16 kHz. The page's Web Audio capture sends the rate the device runs at, so the
//! resampling happens here, once, over the whole utterance (a windowed sinc). Everything
//! stays in memory.

/// The rate the speech engine listens at.
pub const RATE: u32 = 16_000;

/// Why audio could not be read, in words for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadAudio {
    #[error("this is not a WAV file")]
    NotWav,
    #[error("the WAV file has no {0} part")]
    Missing(&'static str),
    #[error("the WAV file holds {0}; Skald takes PCM (8, 16, 24 or 32-bit) or 32-bit float")]
    Format(String),
    #[error("the audio has {0} channels; Skald takes mono or stereo")]
    Channels(u16),
    #[error("the audio runs at {0} Hz; Skald takes 8,000 to 48,000 Hz")]
    Rate(u32),
    #[error("the recording is longer than {0} minutes")]
    TooLong(u32),
}

/// The longest recording taken: the engine listens to 10 minutes at most.
pub const MAX_MINUTES: u32 = 10;

/// Mono samples at [`RATE`], and how long they last.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    pub samples: Vec<f32>,
}

impl Audio {
    pub fn seconds(&self) -> f64 {
        self.samples.len() as f64 / f64::from(RATE)
    }
}

/// Reads `bytes` as a WAV file and returns its sound as one channel at 16 kHz.
pub fn read(bytes: &[u8]) -> Result<Audio, BadAudio> {
    if bytes.len() < 12 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(BadAudio::NotWav);
    }
    let mut format = None;
    let mut data = None;
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let declared = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]) as usize;
        let start = at + 8;
        // A recorder that streams (espeak-ng --stdout) cannot know the size and writes the
        // largest there is: the chunk then runs to the end of the file.
        let end = start.saturating_add(declared).min(bytes.len());
        match id {
            b"fmt " => format = Some(Format::read(&bytes[start..end])?),
            b"data" => {
                data = Some(&bytes[start..end]);
                break;
            }
            _ => {}
        }
        // Chunks are padded to an even length.
        at = end + (declared & 1);
    }
    let format = format.ok_or(BadAudio::Missing("format"))?;
    let data = data.ok_or(BadAudio::Missing("sound"))?;
    let frame = usize::from(format.channels) * format.width();
    let frames = data.len() / frame;
    if frames as u64 > u64::from(MAX_MINUTES) * 60 * u64::from(format.rate) {
        return Err(BadAudio::TooLong(MAX_MINUTES));
    }
    let mono: Vec<f32> = data
        .chunks_exact(frame)
        .map(|f| {
            let sum: f32 = f.chunks_exact(format.width()).map(|s| format.sample(s)).sum();
            sum / f32::from(format.channels)
        })
        .collect();
    Ok(Audio { samples: resample(&mono, format.rate, RATE) })
}

/// What the `fmt ` chunk says.
#[derive(Debug, Clone, Copy)]
struct Format {
    float: bool,
    channels: u16,
    rate: u32,
    bits: u16,
}

/// WAVE_FORMAT_PCM, WAVE_FORMAT_IEEE_FLOAT, WAVE_FORMAT_EXTENSIBLE.
const PCM: u16 = 1;
const FLOAT: u16 = 3;
const EXTENSIBLE: u16 = 0xfffe;

impl Format {
    fn read(chunk: &[u8]) -> Result<Self, BadAudio> {
        if chunk.len() < 16 {
            return Err(BadAudio::Missing("format"));
        }
        let u16_at = |i: usize| u16::from_le_bytes([chunk[i], chunk[i + 1]]);
        let mut tag = u16_at(0);
        let channels = u16_at(2);
        let rate = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]);
        let bits = u16_at(14);
        // The extensible form names the real format in the first two bytes of its GUID.
        if tag == EXTENSIBLE && chunk.len() >= 26 {
            tag = u16_at(24);
        }
        let float = match (tag, bits) {
            (PCM, 8 | 16 | 24 | 32) => false,
            (FLOAT, 32) => true,
            (PCM, bits) => return Err(BadAudio::Format(format!("{bits}-bit PCM"))),
            (FLOAT, bits) => return Err(BadAudio::Format(format!("{bits}-bit float"))),
            (tag, _) => return Err(BadAudio::Format(format!("format {tag:#06x}"))),
        };
        if !(1..=2).contains(&channels) {
            return Err(BadAudio::Channels(channels));
        }
        if !(8_000..=48_000).contains(&rate) {
            return Err(BadAudio::Rate(rate));
        }
        Ok(Self { float, channels, rate, bits })
    }

    fn width(&self) -> usize {
        usize::from(self.bits / 8)
    }

    /// One sample, full scale 1.0.
    fn sample(&self, b: &[u8]) -> f32 {
        match (self.float, self.bits) {
            (true, _) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            (false, 8) => (f32::from(b[0]) - 128.0) / 128.0,
            (false, 16) => f32::from(i16::from_le_bytes([b[0], b[1]])) / 32_768.0,
            (false, 24) => (i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8) as f32 / 8_388_608.0,
            (false, _) => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / 2_147_483_648.0,
        }
    }
}

/// `samples` at [`RATE`] as a WAV file of mono 16-bit PCM: what a provider is sent.
pub fn encode(samples: &[f32]) -> Vec<u8> {
    let data = u32::try_from(samples.len() * 2).unwrap_or(u32::MAX - 36);
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&RATE.to_le_bytes());
    out.extend_from_slice(&(RATE * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data.to_le_bytes());
    for sample in samples {
        out.extend_from_slice(&((sample.clamp(-1.0, 1.0) * 32_767.0).round() as i16).to_le_bytes());
    }
    out
}

/// Below this level (RMS over 30 ms windows, full scale 1.0) a window is silence.
const VOICE_FLOOR: f32 = 0.01;
/// How many windows above the floor make speech: a click or a cough is not.
const VOICED_WINDOWS: usize = 8;

/// Whether `samples` (at [`RATE`]) hold anything like speech. Whisper invents words for
/// silence, so audio without it is given to no engine and no provider: the speech engine
/// checks the same way on its side.
pub fn has_voice(samples: &[f32]) -> bool {
    let window = RATE as usize * 30 / 1000;
    let voiced = samples
        .chunks(window)
        .filter(|w| (w.iter().map(|s| s * s).sum::<f32>() / w.len() as f32).sqrt() >= VOICE_FLOOR)
        .count();
    voiced >= VOICED_WINDOWS
}

/// How many zero crossings of the filter's sinc each side of a sample is weighed.
const TAPS: f64 = 16.0;

/// `input` at `from` Hz, resampled to `to` Hz by a Blackman-windowed sinc whose cutoff sits
/// just under the lower of the two Nyquist frequencies, so nothing folds back as noise.
pub fn resample(input: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || input.is_empty() {
        return input.to_vec();
    }
    let ratio = f64::from(to) / f64::from(from);
    let cutoff = ratio.min(1.0) * 0.95;
    let reach = (TAPS / cutoff).ceil() as i64;
    let length = (input.len() as f64 * ratio).round() as usize;
    let last = input.len() as i64 - 1;
    (0..length)
        .map(|n| {
            let t = n as f64 / ratio;
            let centre = t.floor() as i64;
            let mut sum = 0.0;
            for k in (centre - reach + 1).max(0)..=(centre + reach).min(last) {
                let x = t - k as f64;
                let window = blackman(x / reach as f64);
                sum += f64::from(input[k as usize]) * cutoff * sinc(cutoff * x) * window;
            }
            sum as f32
        })
        .collect()
}

fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-9 {
        1.0
    } else {
        let px = std::f64::consts::PI * x;
        px.sin() / px
    }
}

/// The Blackman window over `x` in -1..1 (zero outside).
fn blackman(x: f64) -> f64 {
    if x.abs() >= 1.0 {
        return 0.0;
    }
    let phase = std::f64::consts::PI * (x + 1.0);
    0.42 - 0.5 * phase.cos() + 0.08 * (2.0 * phase).cos()
}

#[cfg(test)]
mod tests {
    #[test]
    fn encoded_audio_reads_back_and_only_speech_counts_as_voice() {
        let tone: Vec<f32> = (0..RATE).map(|i| (i as f32 * 0.05).sin() * 0.3).collect();
        let back = read(&encode(&tone)).unwrap();
        assert_eq!(back.samples.len(), tone.len());
        assert!(back.samples.iter().zip(&tone).all(|(a, b)| (a - b).abs() < 1e-3));
        assert!(has_voice(&tone));
        assert!(!has_voice(&vec![0.0; RATE as usize]));
        let mut click = vec![0.0; RATE as usize];
        click[100..300].fill(0.9);
        assert!(!has_voice(&click), "a click is not speech");
    }

    use super::*;

    /// A WAV file: the `fmt ` chunk's fields, then the samples' bytes.
    fn wav(tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
        let mut out = b"RIFF\0\0\0\0WAVE".to_vec();
        out.extend_from_slice(b"fmt \x10\0\0\0");
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&channels.to_le_bytes());
        out.extend_from_slice(&rate.to_le_bytes());
        let block = channels * bits / 8;
        out.extend_from_slice(&(rate * u32::from(block)).to_le_bytes());
        out.extend_from_slice(&block.to_le_bytes());
        out.extend_from_slice(&bits.to_le_bytes());
        out.extend_from_slice(b"LIST\x03\0\0\0abc\0"); // an odd chunk, padded
        out.extend_from_slice(b"data");
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
        out
    }

    fn tone(rate: u32, hz: f32, seconds: f32) -> Vec<f32> {
        let n = (rate as f32 * seconds) as usize;
        (0..n).map(|i| 0.5 * (i as f32 * hz * std::f32::consts::TAU / rate as f32).sin()).collect()
    }

    /// The tone's frequency, from its rising zero crossings.
    fn frequency(samples: &[f32], rate: u32) -> f32 {
        let rising = samples.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        rising as f32 * rate as f32 / samples.len() as f32
    }

    fn rms(samples: &[f32]) -> f32 {
        (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt()
    }

    #[test]
    fn a_tone_keeps_its_pitch_and_level_from_every_rate() {
        for rate in [8_000, 22_050, 44_100, 48_000] {
            let out = resample(&tone(rate, 440.0, 1.0), rate, RATE);
            assert_eq!(out.len(), 16_000, "{rate} Hz");
            let inner = &out[800..15_200];
            assert!((frequency(inner, RATE) - 440.0).abs() < 3.0, "{rate} Hz: {}", frequency(inner, RATE));
            assert!((rms(inner) - 0.5 / 2f32.sqrt()).abs() < 0.01, "{rate} Hz: level {}", rms(inner));
        }
    }

    #[test]
    fn what_is_above_the_new_nyquist_is_filtered_out_not_folded_back() {
        // 11 kHz at 48 kHz would fold to 5 kHz at 16 kHz without the filter.
        let out = resample(&tone(48_000, 11_000.0, 1.0), 48_000, RATE);
        assert!(rms(&out[800..15_200]) < 0.01, "left {}", rms(&out[800..15_200]));
    }

    #[test]
    fn sixteen_bit_stereo_becomes_one_channel() {
        let frames: Vec<u8> =
            (0..16_000).flat_map(|_| [16_384i16.to_le_bytes(), (-16_384i16).to_le_bytes()]).flatten().collect();
        let audio = read(&wav(PCM, 2, 16_000, 16, &frames)).unwrap();
        assert_eq!(audio.samples.len(), 16_000);
        assert!(audio.samples.iter().all(|s| s.abs() < 1e-6), "left and right cancel out");
        assert!((audio.seconds() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn floats_24_bits_and_the_extensible_form_are_read() {
        let floats: Vec<u8> = [0.25f32; 160].iter().flat_map(|s| s.to_le_bytes()).collect();
        assert!(read(&wav(FLOAT, 1, 16_000, 32, &floats)).unwrap().samples.iter().all(|s| (s - 0.25).abs() < 1e-6));
        let deep: Vec<u8> = (0..160).flat_map(|_| [0x00, 0x00, 0xc0]).collect(); // -0.5 in 24 bits
        assert!(read(&wav(PCM, 1, 16_000, 24, &deep)).unwrap().samples.iter().all(|s| (s + 0.5).abs() < 1e-6));
        let mut extensible = wav(EXTENSIBLE, 1, 16_000, 32, &floats);
        // Grow `fmt ` to the extensible form's 40 bytes, naming float in its GUID.
        let mut guid = vec![22, 0, 32, 0, 4, 0, 0, 0];
        guid.extend_from_slice(&FLOAT.to_le_bytes());
        guid.extend_from_slice(&[0; 14]);
        extensible.splice(36..36, guid);
        extensible[16] = 40;
        assert!(read(&extensible).unwrap().samples.iter().all(|s| (s - 0.25).abs() < 1e-6));
    }

    #[test]
    fn a_stream_s_unknown_size_runs_to_the_end_of_the_file() {
        let samples: Vec<u8> = (0..320).flat_map(|_| 8_192i16.to_le_bytes()).collect();
        let mut streamed = wav(PCM, 1, 16_000, 16, &samples);
        let at = streamed.len() - samples.len() - 4;
        streamed[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read(&streamed).unwrap().samples.len(), 320);
    }

    #[test]
    fn what_is_not_such_audio_is_refused_with_why() {
        assert_eq!(read(b"ID3\x04 an mp3"), Err(BadAudio::NotWav));
        assert_eq!(read(&wav(PCM, 1, 96_000, 16, &[0; 4])), Err(BadAudio::Rate(96_000)));
        assert_eq!(read(&wav(PCM, 6, 16_000, 16, &[0; 24])), Err(BadAudio::Channels(6)));
        assert_eq!(read(&wav(0x55, 1, 16_000, 16, &[0; 4])), Err(BadAudio::Format("format 0x0055".into())));
        assert_eq!(read(&wav(PCM, 1, 16_000, 12, &[0; 4])), Err(BadAudio::Format("12-bit PCM".into())));
        assert_eq!(read(&b"RIFF\0\0\0\0WAVEdata\0\0\0\0"[..]), Err(BadAudio::Missing("format")));
        let minutes = vec![0u8; (11 * 60 * 8_000) as usize];
        assert_eq!(read(&wav(PCM, 1, 8_000, 8, &minutes)), Err(BadAudio::TooLong(MAX_MINUTES)));
        assert!(read(&wav(PCM, 1, 8_000, 8, &[128; 80])).is_ok());
    }
}
