//! GGUF model files, checked before llama.cpp sees them. llama.cpp may abort the whole
//! process on a malformed file, so Skald first walks the header here, in safe Rust, and reads
//! the few metadata values it needs: the architecture, its context length and size, the
//! quantisation and whether a chat template is present.
//!
//! Never here: tensor data (only its bounds are checked) or loading the model. Every length
//! the file claims is checked against a cap and against the bytes left before anything is
//! read by it, and arrays nobody needs are read and discarded, so a hostile file can make
//! Skald neither allocate without bound nor loop past the end of the file.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::RangeInclusive;
use std::path::Path;

/// What Skald needs to know about a GGUF file before loading it.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufInfo {
    pub version: u32,
    pub tensor_count: u64,
    /// `general.architecture`, e.g. `llama`.
    pub architecture: Option<String>,
    /// `general.name`.
    pub name: Option<String>,
    /// `<architecture>.context_length`: the longest context the model was trained for.
    pub context_length: Option<u64>,
    /// `<architecture>.block_count`: the number of layers.
    pub block_count: Option<u64>,
    /// `<architecture>.embedding_length`.
    pub embedding_length: Option<u64>,
    /// `<architecture>.attention.head_count` and `.head_count_kv`, when each is one number
    /// (some models list one per layer): with them the KV cache's size can be foretold.
    pub head_count: Option<u64>,
    pub head_count_kv: Option<u64>,
    /// `general.file_type`: the quantisation, as llama.cpp numbers it.
    pub file_type: Option<u32>,
    /// Whether `tokenizer.chat_template` is present.
    pub has_chat_template: bool,
    /// Whether that template mentions tools: one that does not cannot lay them out, and
    /// llama.cpp then renders the prompt without them.
    pub template_takes_tools: bool,
    pub file_size: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("could not read the model file: {0}")]
    Io(#[from] io::Error),
    #[error("this is not a GGUF model file: choose a .gguf file made for llama.cpp")]
    NotGguf,
    #[error(
        "this model file uses GGUF version {0}, but Skald reads only versions 2 and 3: \
         get a copy written by a current llama.cpp"
    )]
    UnsupportedVersion(u32),
    #[error("the file ends in the middle of its header: it is damaged or was not fully downloaded")]
    Truncated,
    #[error("the model file is malformed ({0}): download it again or choose another")]
    Malformed(String),
}

/// Opens the file at `path` and checks it with [`parse`].
pub fn read_info(path: &Path) -> Result<GgufInfo, GgufError> {
    let file = File::open(path)?;
    let file_size = file.metadata()?.len();
    parse(&mut BufReader::with_capacity(64 * 1024, file), file_size)
}

/// Walks a GGUF header from `bytes`, a file `file_size` bytes long, and returns what Skald
/// needs from it. Reads the metadata and tensor descriptions, never the tensor data.
pub fn parse(bytes: &mut impl Read, file_size: u64) -> Result<GgufInfo, GgufError> {
    let mut source = Source { reader: bytes, position: 0, file_size };
    source.magic()?;
    let version = source.u32()?;
    if !SUPPORTED_VERSIONS.contains(&version) {
        // A big-endian file reads as version 0x0300_0000: say what it is, not what it seems.
        if SUPPORTED_VERSIONS.contains(&version.swap_bytes()) {
            return Err(malformed("it is stored big-endian; Skald needs the usual little-endian GGUF"));
        }
        return Err(GgufError::UnsupportedVersion(version));
    }
    let tensor_count = source.u64()?;
    if tensor_count > MAX_TENSOR_COUNT {
        return Err(malformed(format!("it claims {tensor_count} tensors")));
    }
    let kv_count = source.u64()?;
    if kv_count > MAX_KV_COUNT {
        return Err(malformed(format!("it claims {kv_count} metadata entries")));
    }

    let metadata = Metadata::read(&mut source, kv_count)?;
    let alignment = metadata.alignment.unwrap_or(DEFAULT_ALIGNMENT);
    if !alignment.is_power_of_two() {
        return Err(malformed(format!("general.alignment is {alignment}, which is not a power of two")));
    }
    check_tensors(&mut source, tensor_count, alignment)?;

    let key = |suffix: &str| metadata.architecture.as_ref().map(|architecture| format!("{architecture}.{suffix}"));
    let whole_number = |suffix| key(suffix).map_or(Ok(None), |key| metadata.deferred_whole_number(&key));
    Ok(GgufInfo {
        version,
        tensor_count,
        context_length: whole_number("context_length")?,
        block_count: whole_number("block_count")?,
        embedding_length: whole_number("embedding_length")?,
        head_count: key("attention.head_count").and_then(|key| metadata.lenient_whole_number(&key)),
        head_count_kv: key("attention.head_count_kv").and_then(|key| metadata.lenient_whole_number(&key)),
        architecture: metadata.architecture,
        name: metadata.name,
        file_type: metadata.file_type,
        has_chat_template: metadata.has_chat_template,
        template_takes_tools: metadata.template_takes_tools,
        file_size,
    })
}

const MAGIC: &[u8; 4] = b"GGUF";
const SUPPORTED_VERSIONS: RangeInclusive<u32> = 2..=3;
const DEFAULT_ALIGNMENT: u64 = 32;

// Caps on what the file may claim. Real files stay far below them: a tokenizer holds a few
// hundred thousand strings, a model a few thousand tensors and a few dozen metadata entries.
const MAX_KV_COUNT: u64 = 1_000_000;
const MAX_TENSOR_COUNT: u64 = 1_000_000;
const MAX_STRING_LEN: u64 = 64 << 20;
const MAX_ARRAY_LEN: u64 = 1 << 26;
/// Arrays may hold arrays; the cap keeps a hostile file from exhausting the stack.
const MAX_ARRAY_DEPTH: u32 = 8;
/// `<architecture>.*` values kept until the architecture is known; past this, further
/// candidates are ignored rather than held.
const MAX_DEFERRED: usize = 256;

// ggml's own limits (GGML_MAX_NAME, GGML_MAX_DIMS): llama.cpp refuses anything beyond them.
const MAX_TENSOR_NAME_LEN: u64 = 63;
const MAX_DIMS: u32 = 4;
/// ggml defines about 40 tensor types; an id this high is damage, not a newer type.
const MAX_TENSOR_TYPE: u32 = 64;

/// The `<architecture>.*` keys Skald reads.
const ARCHITECTURE_SUFFIXES: [&str; 5] =
    [".context_length", ".block_count", ".embedding_length", ".attention.head_count", ".attention.head_count_kv"];

fn malformed(why: impl Into<String>) -> GgufError {
    GgufError::Malformed(why.into())
}

/// The metadata values Skald keeps, gathered in whatever order the file lists them.
#[derive(Default)]
struct Metadata {
    architecture: Option<String>,
    name: Option<String>,
    file_type: Option<u32>,
    alignment: Option<u64>,
    has_chat_template: bool,
    template_takes_tools: bool,
    /// Keys ending in one of [`ARCHITECTURE_SUFFIXES`] with their whole-number value (`None`
    /// when of another type), kept because the architecture they depend on may come later.
    deferred: Vec<(String, Option<i128>)>,
}

impl Metadata {
    fn read<R: Read>(source: &mut Source<'_, R>, kv_count: u64) -> Result<Self, GgufError> {
        let mut metadata = Self::default();
        for _ in 0..kv_count {
            let key = source.string()?;
            let kind = ValueType::from_id(source.u32()?)?;
            match key.as_str() {
                "general.architecture" => metadata.architecture = Some(source.text(&key, kind)?),
                "general.name" => metadata.name = Some(source.text(&key, kind)?),
                "general.file_type" => metadata.file_type = Some(source.whole_number(&key, kind)?),
                "general.alignment" => metadata.alignment = Some(source.whole_number(&key, kind)?),
                "tokenizer.chat_template" => {
                    metadata.template_takes_tools = source.text(&key, kind)?.contains("tools");
                    metadata.has_chat_template = true;
                }
                _ if ARCHITECTURE_SUFFIXES.iter().any(|suffix| key.ends_with(suffix)) => {
                    let value = source.integer(kind)?;
                    if metadata.deferred.len() < MAX_DEFERRED {
                        metadata.deferred.push((key, value));
                    }
                }
                _ => source.skip_value(kind, 0)?,
            }
        }
        Ok(metadata)
    }

    /// A value Skald can do without: `None` when absent, a list or out of range.
    fn lenient_whole_number(&self, key: &str) -> Option<u64> {
        let (_, value) = self.deferred.iter().find(|(candidate, _)| candidate == key)?;
        value.and_then(|value| u64::try_from(value).ok())
    }

    fn deferred_whole_number(&self, key: &str) -> Result<Option<u64>, GgufError> {
        match self.deferred.iter().find(|(candidate, _)| candidate == key) {
            None => Ok(None),
            Some((_, None)) => Err(malformed(format!("`{key}` should be a whole number"))),
            Some((_, Some(value))) => u64::try_from(*value)
                .map(Some)
                .map_err(|_| malformed(format!("`{key}` is {value}, which is below zero"))),
        }
    }
}

/// Reads the tensor descriptions and checks each against ggml's limits, and that the data
/// they point at starts inside the file.
fn check_tensors<R: Read>(source: &mut Source<'_, R>, tensor_count: u64, alignment: u64) -> Result<(), GgufError> {
    // The tensor whose data starts furthest in; the others start before it.
    let mut furthest: Option<(String, u64)> = None;
    for _ in 0..tensor_count {
        let length = source.length()?;
        if length > MAX_TENSOR_NAME_LEN {
            return Err(malformed(format!(
                "a tensor name is {length} bytes long; at most {MAX_TENSOR_NAME_LEN} are allowed"
            )));
        }
        let name = String::from_utf8_lossy(&source.take(length)?).into_owned();
        let dims = source.u32()?;
        if dims > MAX_DIMS {
            return Err(malformed(format!("tensor `{name}` has {dims} dimensions; at most {MAX_DIMS} are allowed")));
        }
        // ggml counts elements in an i64: the product of the dimensions must fit one.
        let mut elements: i64 = 1;
        for _ in 0..dims {
            let dim = source.u64()?;
            elements = i64::try_from(dim)
                .ok()
                .and_then(|dim| elements.checked_mul(dim))
                .ok_or_else(|| malformed(format!("tensor `{name}` is impossibly large")))?;
        }
        let kind = source.u32()?;
        if kind >= MAX_TENSOR_TYPE {
            return Err(malformed(format!("tensor `{name}` has the unknown type {kind}")));
        }
        let offset = source.u64()?;
        if !offset.is_multiple_of(alignment) {
            return Err(malformed(format!("tensor `{name}` starts at {offset}, not a multiple of {alignment}")));
        }
        if furthest.as_ref().is_none_or(|(_, furthest)| offset > *furthest) {
            furthest = Some((name, offset));
        }
    }
    let Some((name, offset)) = furthest else { return Ok(()) };
    let data_start = source.position.checked_next_multiple_of(alignment);
    if data_start.and_then(|start| start.checked_add(offset)).is_none_or(|start| start > source.file_size) {
        return Err(malformed(format!("tensor `{name}` lies past the end of the file")));
    }
    Ok(())
}

/// The GGUF value types, by the ids the file uses.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ValueType {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    Bool,
    String,
    Array,
    U64,
    I64,
    F64,
}

impl ValueType {
    fn from_id(id: u32) -> Result<Self, GgufError> {
        Ok(match id {
            0 => Self::U8,
            1 => Self::I8,
            2 => Self::U16,
            3 => Self::I16,
            4 => Self::U32,
            5 => Self::I32,
            6 => Self::F32,
            7 => Self::Bool,
            8 => Self::String,
            9 => Self::Array,
            10 => Self::U64,
            11 => Self::I64,
            12 => Self::F64,
            _ => return Err(malformed(format!("a metadata value has the unknown type {id}"))),
        })
    }

    /// The bytes one value takes; for a string or an array, the fewest it can take (its
    /// length, or its element type and count).
    fn size(self) -> u64 {
        match self {
            Self::U8 | Self::I8 | Self::Bool => 1,
            Self::U16 | Self::I16 => 2,
            Self::U32 | Self::I32 | Self::F32 => 4,
            Self::U64 | Self::I64 | Self::F64 | Self::String => 8,
            Self::Array => 12,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::F32 | Self::F64 => "a fraction",
            Self::Bool => "true or false",
            Self::String => "text",
            Self::Array => "a list",
            _ => "a whole number",
        }
    }
}

/// The file being read, and how far into it the reader is.
struct Source<'a, R> {
    reader: &'a mut R,
    position: u64,
    file_size: u64,
}

impl<R: Read> Source<'_, R> {
    fn remaining(&self) -> u64 {
        self.file_size.saturating_sub(self.position)
    }

    /// Checks the magic, telling a file cut short within it from one that is something else.
    fn magic(&mut self) -> Result<(), GgufError> {
        let mut start = Vec::new();
        Read::take(&mut *self.reader, MAGIC.len() as u64).read_to_end(&mut start)?;
        self.position += start.len() as u64;
        if !MAGIC.starts_with(&start) {
            return Err(GgufError::NotGguf);
        }
        if start.len() < MAGIC.len() {
            return Err(GgufError::Truncated);
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        let mut buffer = [0; N];
        self.reader.read_exact(&mut buffer).map_err(|error| match error.kind() {
            io::ErrorKind::UnexpectedEof => GgufError::Truncated,
            _ => GgufError::Io(error),
        })?;
        self.position += N as u64;
        Ok(buffer)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        self.bytes().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        self.bytes().map(u64::from_le_bytes)
    }

    /// Reads `length` bytes, which must be no more than the file has left; the buffer grows
    /// with the bytes that actually arrive, never by the claim alone.
    fn take(&mut self, length: u64) -> Result<Vec<u8>, GgufError> {
        if length > self.remaining() {
            return Err(GgufError::Truncated);
        }
        let mut buffer = Vec::new();
        Read::take(&mut *self.reader, length).read_to_end(&mut buffer)?;
        if (buffer.len() as u64) < length {
            return Err(GgufError::Truncated);
        }
        self.position += length;
        Ok(buffer)
    }

    /// Reads and discards `length` bytes, which must be no more than the file has left.
    fn skip(&mut self, length: u64) -> Result<(), GgufError> {
        if length > self.remaining() {
            return Err(GgufError::Truncated);
        }
        let skipped = io::copy(&mut Read::take(&mut *self.reader, length), &mut io::sink())?;
        if skipped < length {
            return Err(GgufError::Truncated);
        }
        self.position += length;
        Ok(())
    }

    /// A string's length, checked against the cap: past it the length is nonsense, below it
    /// but past the end the file was cut short.
    fn length(&mut self) -> Result<u64, GgufError> {
        let length = self.u64()?;
        if length > MAX_STRING_LEN {
            return Err(malformed(format!("a string claims to be {length} bytes long")));
        }
        if length > self.remaining() {
            return Err(GgufError::Truncated);
        }
        Ok(length)
    }

    /// A string, read leniently: a stray byte in a name is no reason to refuse a model that
    /// llama.cpp would load.
    fn string(&mut self) -> Result<String, GgufError> {
        let length = self.length()?;
        Ok(String::from_utf8_lossy(&self.take(length)?).into_owned())
    }

    fn text(&mut self, key: &str, kind: ValueType) -> Result<String, GgufError> {
        if kind != ValueType::String {
            return Err(malformed(format!("`{key}` should be text, not {}", kind.describe())));
        }
        self.string()
    }

    /// A whole number of any width, as `T`; any other type, or a value `T` cannot hold, is
    /// malformed.
    fn whole_number<T: TryFrom<i128>>(&mut self, key: &str, kind: ValueType) -> Result<T, GgufError> {
        match self.integer(kind)? {
            None => Err(malformed(format!("`{key}` should be a whole number, not {}", kind.describe()))),
            Some(value) => T::try_from(value).map_err(|_| malformed(format!("`{key}` is {value}, out of range"))),
        }
    }

    /// A value of any integer type, widened; `None`, with the value skipped, for other types.
    fn integer(&mut self, kind: ValueType) -> Result<Option<i128>, GgufError> {
        Ok(Some(match kind {
            ValueType::U8 => u8::from_le_bytes(self.bytes()?).into(),
            ValueType::I8 => i8::from_le_bytes(self.bytes()?).into(),
            ValueType::U16 => u16::from_le_bytes(self.bytes()?).into(),
            ValueType::I16 => i16::from_le_bytes(self.bytes()?).into(),
            ValueType::U32 => u32::from_le_bytes(self.bytes()?).into(),
            ValueType::I32 => i32::from_le_bytes(self.bytes()?).into(),
            ValueType::U64 => u64::from_le_bytes(self.bytes()?).into(),
            ValueType::I64 => i64::from_le_bytes(self.bytes()?).into(),
            _ => {
                self.skip_value(kind, 0)?;
                return Ok(None);
            }
        }))
    }

    /// Reads past one value without keeping it; `depth` counts the arrays it sits in.
    fn skip_value(&mut self, kind: ValueType, depth: u32) -> Result<(), GgufError> {
        match kind {
            ValueType::String => {
                let length = self.length()?;
                self.skip(length)
            }
            ValueType::Array => {
                if depth >= MAX_ARRAY_DEPTH {
                    return Err(malformed(format!("its lists are nested more than {MAX_ARRAY_DEPTH} deep")));
                }
                let element = ValueType::from_id(self.u32()?)?;
                let count = self.u64()?;
                if count > MAX_ARRAY_LEN {
                    return Err(malformed(format!("a list claims {count} entries")));
                }
                // Below the cap this cannot overflow; it finds a cut-short list before walking it.
                let least = count * element.size();
                if least > self.remaining() {
                    return Err(GgufError::Truncated);
                }
                match element {
                    ValueType::String | ValueType::Array => {
                        (0..count).try_for_each(|_| self.skip_value(element, depth + 1))
                    }
                    _ => self.skip(least),
                }
            }
            _ => self.skip(kind.size()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U8: u32 = 0;
    const I8: u32 = 1;
    const U16: u32 = 2;
    const I16: u32 = 3;
    const U32: u32 = 4;
    const I32: u32 = 5;
    const F32: u32 = 6;
    const STRING: u32 = 8;
    const ARRAY: u32 = 9;
    const U64: u32 = 10;
    const I64: u32 = 11;
    const F16_TENSOR: u32 = 1;

    /// Writes GGUF bytes one field at a time, laid out as llama.cpp writes them.
    #[derive(Clone)]
    struct Gguf(Vec<u8>);

    impl Gguf {
        fn new(version: u32, tensors: u64, entries: u64) -> Self {
            Self(MAGIC.to_vec()).u32(version).u64(tensors).u64(entries)
        }

        fn raw(mut self, bytes: &[u8]) -> Self {
            self.0.extend_from_slice(bytes);
            self
        }

        fn u32(self, value: u32) -> Self {
            self.raw(&value.to_le_bytes())
        }

        fn u64(self, value: u64) -> Self {
            self.raw(&value.to_le_bytes())
        }

        fn string(self, text: &str) -> Self {
            self.u64(text.len() as u64).raw(text.as_bytes())
        }

        /// A metadata entry whose value is already encoded.
        fn entry(self, key: &str, kind: u32, value: &[u8]) -> Self {
            self.string(key).u32(kind).raw(value)
        }

        fn text(self, key: &str, value: &str) -> Self {
            self.string(key).u32(STRING).string(value)
        }

        fn tensor(self, name: &str, dims: &[u64], kind: u32, offset: u64) -> Self {
            let this = self.string(name).u32(dims.len() as u32);
            dims.iter().fold(this, |this, dim| this.u64(*dim)).u32(kind).u64(offset)
        }

        /// Pads to `alignment`, then appends `length` bytes of tensor data.
        fn data(mut self, alignment: usize, length: usize) -> Self {
            self.0.resize(self.0.len().next_multiple_of(alignment) + length, 0);
            self
        }

        fn parse(&self) -> Result<GgufInfo, GgufError> {
            parse(&mut self.0.as_slice(), self.0.len() as u64)
        }
    }

    /// The header of a small, well-formed model: two f16 tensors of 64×100.
    fn header() -> Gguf {
        Gguf::new(3, 2, 9)
            .text("general.architecture", "llama")
            .text("general.name", "Tiny Llama")
            .entry("llama.context_length", U32, &2048u32.to_le_bytes())
            .entry("llama.block_count", U32, &4u32.to_le_bytes())
            .entry("llama.embedding_length", U64, &64u64.to_le_bytes())
            .entry("llama.attention.head_count", U32, &8u32.to_le_bytes())
            .entry("llama.attention.head_count_kv", U32, &2u32.to_le_bytes())
            .entry("general.file_type", U32, &1u32.to_le_bytes())
            .text("tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}")
            .tensor("token_embd.weight", &[64, 100], F16_TENSOR, 0)
            .tensor("output.weight", &[64, 100], F16_TENSOR, 12_800)
    }

    fn model() -> Gguf {
        header().data(32, 25_600)
    }

    fn is_malformed(result: &Result<GgufInfo, GgufError>) -> bool {
        matches!(result, Err(GgufError::Malformed(_)))
    }

    #[test]
    fn a_well_formed_file_yields_every_field() {
        let file = model();
        let info = file.parse().unwrap();
        assert_eq!(
            info,
            GgufInfo {
                version: 3,
                tensor_count: 2,
                architecture: Some("llama".into()),
                name: Some("Tiny Llama".into()),
                context_length: Some(2048),
                block_count: Some(4),
                embedding_length: Some(64),
                head_count: Some(8),
                head_count_kv: Some(2),
                file_type: Some(1),
                has_chat_template: true,
                template_takes_tools: false,
                file_size: file.0.len() as u64,
            }
        );
    }

    #[test]
    fn head_counts_listed_per_layer_are_left_unknown_not_refused() {
        let mut per_layer = Vec::new();
        for count in [2u32, 4, 4, 2] {
            per_layer.extend_from_slice(&count.to_le_bytes());
        }
        let list = [&U32.to_le_bytes()[..], &4u64.to_le_bytes(), &per_layer].concat();
        let file = Gguf::new(3, 0, 3)
            .text("general.architecture", "openelm")
            .entry("openelm.attention.head_count_kv", ARRAY, &list)
            .entry("openelm.attention.head_count", U32, &8u32.to_le_bytes());
        let info = file.parse().unwrap();
        assert_eq!((info.head_count, info.head_count_kv), (Some(8), None));
    }

    #[test]
    fn version_two_is_read_like_version_three() {
        let mut file = model();
        file.0[4..8].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(file.parse().unwrap().version, 2);
    }

    #[test]
    fn a_file_without_the_magic_is_not_gguf() {
        let cases: [&[u8]; 4] = [b"GGML\x03\0\0\0", b"hello, world", b"\x89PNG\r\n\x1a\n", b"GX"];
        for bytes in cases {
            let result = parse(&mut &bytes[..], bytes.len() as u64);
            assert!(matches!(result, Err(GgufError::NotGguf)), "{bytes:?} gave {result:?}");
        }
    }

    #[test]
    fn versions_other_than_two_and_three_are_unsupported() {
        for version in [0u32, 1, 4] {
            let mut file = model();
            file.0[4..8].copy_from_slice(&version.to_le_bytes());
            let result = file.parse();
            assert!(matches!(result, Err(GgufError::UnsupportedVersion(v)) if v == version), "{result:?}");
        }
    }

    #[test]
    fn a_big_endian_file_is_named_as_such() {
        let mut file = model();
        file.0[4..8].copy_from_slice(&3u32.to_be_bytes());
        let error = file.parse().unwrap_err();
        assert!(error.to_string().contains("big-endian"), "{error}");
    }

    #[test]
    fn a_file_cut_short_anywhere_in_its_header_is_truncated() {
        let header = header().0;
        for cut in 0..header.len() {
            let result = parse(&mut &header[..cut], cut as u64);
            assert!(matches!(result, Err(GgufError::Truncated)), "cut at {cut} gave {result:?}");
        }
    }

    #[test]
    fn a_file_cut_short_in_its_tensor_data_is_malformed() {
        let mut file = model();
        file.0.truncate(file.0.len() - 12_900);
        let error = file.parse().unwrap_err();
        assert!(error.to_string().contains("`output.weight` lies past the end"), "{error}");
    }

    #[test]
    fn a_file_shorter_than_it_claims_to_be_is_truncated() {
        let file = model();
        let result = parse(&mut &file.0[..100], file.0.len() as u64);
        assert!(matches!(result, Err(GgufError::Truncated)), "{result:?}");
    }

    #[test]
    fn an_absurd_string_length_is_malformed_not_allocated() {
        for length in [u64::MAX, 1 << 40, MAX_STRING_LEN + 1] {
            let as_key = Gguf::new(3, 0, 1).u64(length).raw(b"general.name");
            let as_value = Gguf::new(3, 0, 1).string("general.name").u32(STRING).u64(length).raw(b"x");
            let as_skipped = Gguf::new(3, 0, 1).string("some.note").u32(STRING).u64(length).raw(b"x");
            for file in [as_key, as_value, as_skipped] {
                assert!(is_malformed(&file.parse()), "length {length} gave {:?}", file.parse());
            }
        }
    }

    #[test]
    fn a_string_longer_than_the_rest_of_the_file_is_truncated() {
        let file = Gguf::new(3, 0, 1).string("general.name").u32(STRING).u64(1000).raw(b"short");
        assert!(matches!(file.parse(), Err(GgufError::Truncated)));
    }

    #[test]
    fn absurd_counts_are_malformed() {
        let cases = [
            ("tensor count", Gguf::new(3, 1 << 40, 0)),
            ("entry count", Gguf::new(3, 0, 1 << 40)),
            ("list length", Gguf::new(3, 0, 1).string("tokenizer.ggml.scores").u32(ARRAY).u32(F32).u64(u64::MAX)),
            ("value type", Gguf::new(3, 0, 1).string("general.name").u32(13)),
            ("list element type", Gguf::new(3, 0, 1).string("some.list").u32(ARRAY).u32(99).u64(1)),
        ];
        for (what, file) in cases {
            assert!(is_malformed(&file.parse()), "an absurd {what} gave {:?}", file.parse());
        }
    }

    #[test]
    fn a_vocabulary_of_strings_is_skipped_and_what_follows_is_read() {
        let tokens = ["<s>", "</s>", "hello", "", "wörld"];
        let vocabulary = tokens
            .iter()
            .fold(Gguf::new(3, 0, 4).string("tokenizer.ggml.tokens").u32(ARRAY).u32(STRING).u64(5), |file, token| {
                file.string(token)
            });
        let file = vocabulary
            .string("tokenizer.ggml.scores")
            .u32(ARRAY)
            .u32(F32)
            .u64(5)
            .raw(&[0; 20])
            .string("nested.lists")
            .u32(ARRAY)
            .u32(ARRAY)
            .u64(2)
            .u32(U16)
            .u64(3)
            .raw(&[0; 6])
            .u32(STRING)
            .u64(1)
            .string("inner")
            .text("general.name", "After the lists");
        assert_eq!(file.parse().unwrap().name.as_deref(), Some("After the lists"));
    }

    #[test]
    fn lists_nested_without_end_are_malformed() {
        let mut file = Gguf::new(3, 0, 1).string("deep").u32(ARRAY);
        for _ in 0..100 {
            file = file.u32(ARRAY).u64(1);
        }
        let file = file.u32(U8).u64(0);
        assert!(is_malformed(&file.parse()), "{:?}", file.parse());
    }

    #[test]
    fn context_length_is_read_from_any_integer_type() {
        let cases: [(u32, &[u8]); 8] = [
            (U8, &[200]),
            (I8, &[100]),
            (U16, &200u16.to_le_bytes()),
            (I16, &200i16.to_le_bytes()),
            (U32, &200u32.to_le_bytes()),
            (I32, &200i32.to_le_bytes()),
            (U64, &200u64.to_le_bytes()),
            (I64, &200i64.to_le_bytes()),
        ];
        for (kind, value) in cases {
            let file =
                Gguf::new(3, 0, 2).text("general.architecture", "qwen2").entry("qwen2.context_length", kind, value);
            let expected = if kind == I8 { 100 } else { 200 };
            assert_eq!(file.parse().unwrap().context_length, Some(expected), "type {kind}");
        }
    }

    #[test]
    fn context_length_may_come_before_the_architecture() {
        let file = Gguf::new(3, 0, 3)
            .entry("gemma.context_length", U32, &8192u32.to_le_bytes())
            .entry("llama.context_length", U32, &4096u32.to_le_bytes())
            .text("general.architecture", "gemma");
        assert_eq!(file.parse().unwrap().context_length, Some(8192));
    }

    #[test]
    fn a_negative_or_fractional_context_length_is_malformed() {
        let cases: [(u32, &[u8]); 3] =
            [(I32, &(-1i32).to_le_bytes()), (I64, &i64::MIN.to_le_bytes()), (F32, &2048f32.to_le_bytes())];
        for (kind, value) in cases {
            let file =
                Gguf::new(3, 0, 2).text("general.architecture", "llama").entry("llama.context_length", kind, value);
            assert!(is_malformed(&file.parse()), "type {kind} gave {:?}", file.parse());
        }
    }

    #[test]
    fn missing_metadata_is_none_not_an_error() {
        let info = Gguf::new(3, 0, 0).parse().unwrap();
        assert_eq!((info.architecture, info.context_length, info.has_chat_template), (None, None, false));
    }

    #[test]
    fn a_template_that_mentions_tools_takes_them() {
        let hermes = "{% if tools %}<tools>{{ tools | tojson }}</tools>{% endif %}{{ messages }}";
        let with = Gguf::new(3, 0, 1).text("tokenizer.chat_template", hermes).parse().unwrap();
        assert!(with.has_chat_template && with.template_takes_tools);
        let without = Gguf::new(3, 0, 1).text("tokenizer.chat_template", "{{ messages }}").parse().unwrap();
        assert!(without.has_chat_template && !without.template_takes_tools);
    }

    #[test]
    fn known_keys_of_the_wrong_type_are_malformed() {
        let cases = [
            Gguf::new(3, 0, 1).entry("general.architecture", U32, &1u32.to_le_bytes()),
            Gguf::new(3, 0, 1).entry("general.file_type", STRING, &[0; 8]),
            Gguf::new(3, 0, 1).entry("general.file_type", I64, &(-3i64).to_le_bytes()),
            Gguf::new(3, 0, 1).entry("tokenizer.chat_template", U8, &[1]),
        ];
        for file in cases {
            assert!(is_malformed(&file.parse()), "{:?}", file.parse());
        }
    }

    #[test]
    fn tensors_beyond_ggml_limits_are_malformed() {
        let cases = [
            ("five dimensions", Gguf::new(3, 1, 0).tensor("t", &[1, 1, 1, 1, 1], 0, 0)),
            ("an unknown type", Gguf::new(3, 1, 0).tensor("t", &[1], 200, 0)),
            ("an unaligned offset", Gguf::new(3, 1, 0).tensor("t", &[1], 0, 7)),
            ("too many elements", Gguf::new(3, 1, 0).tensor("t", &[1 << 40, 1 << 40], 0, 0)),
            ("a negative dimension", Gguf::new(3, 1, 0).tensor("t", &[u64::MAX], 0, 0)),
            ("a long name", Gguf::new(3, 1, 0).tensor(&"n".repeat(64), &[1], 0, 0)),
            ("an offset past the end", Gguf::new(3, 1, 0).tensor("t", &[1], 0, 1 << 20)),
        ];
        for (what, file) in cases {
            let file = file.data(32, 4);
            assert!(is_malformed(&file.parse()), "{what} gave {:?}", file.parse());
        }
    }

    #[test]
    fn general_alignment_moves_the_data_and_must_be_a_power_of_two() {
        let aligned = |alignment: u32| {
            Gguf::new(3, 1, 1).entry("general.alignment", U32, &alignment.to_le_bytes()).tensor("t", &[4], 0, 0)
        };
        // 112 bytes: a 90-byte header padded to 96, then 16 of data. Aligned to 32 the data
        // starts at 96; aligned to 64 it would start at 128, past the end.
        assert!(aligned(32).data(8, 16).parse().is_ok());
        let misplaced = aligned(64).data(8, 16);
        assert!(is_malformed(&misplaced.parse()), "{:?}", misplaced.parse());
        for alignment in [0, 24] {
            assert!(is_malformed(&aligned(alignment).data(32, 16).parse()), "alignment {alignment}");
        }
    }

    #[test]
    fn errors_tell_a_person_what_to_do() {
        assert_eq!(
            GgufError::Truncated.to_string(),
            "the file ends in the middle of its header: it is damaged or was not fully downloaded"
        );
        assert!(GgufError::UnsupportedVersion(1).to_string().contains("versions 2 and 3"));
    }
}
