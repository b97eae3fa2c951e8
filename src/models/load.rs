//! Loading with the path of the offending field: [`deserialize_with_path`] and the hand-written
//! `Deserialize` of [`ModelSpec`] that keeps that path through the `"model"` tag.

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};

use crate::error::LoadError;
use crate::{
    CopyTransfer, Log3P, LogGP, LogGpo, LogNP, LogP, MemoryLogP, MemoryNetworkLogP, MlinesModel,
    ModelSpec, PLogP, Pram, Protocols,
};

/// Deserialises any value of the crate (a [`ModelSpec`], a [`Protocols`], a table, ...) from
/// any serde format, naming the field path of the first error (`protocols[1].model.gap`).
///
/// Loading validates exactly as the constructors do; the error then names the object whose
/// validation failed (its path) and the parameter (its message).
///
/// # Errors
///
/// [`LoadError`] with the path and the format's or the validation's message.
///
/// # Examples
///
/// ```
/// use commcost::ModelSpec;
/// use commcost::models::spec::deserialize_with_path;
///
/// let text = r#"{"model": "loggp_protocols", "ranges": [
///     {"start": 1, "end": 1024, "model": {"latency": 5e-6, "overhead": 1e-6, "gap": 2e-6,
///                                          "gap_per_byte": 1e-9, "processors": 2}},
///     {"start": 1024, "end": null, "model": {"latency": 5e-6, "overhead": 1e-6, "gap": "2e-6",
///                                            "gap_per_byte": 1e-9, "processors": 2}}]}"#;
/// let error = deserialize_with_path::<ModelSpec, _>(&mut serde_json::Deserializer::from_str(text))
///     .unwrap_err();
/// assert_eq!(error.path, "ranges[1].model.gap");
/// ```
pub fn deserialize_with_path<'de, T, D>(deserializer: D) -> Result<T, LoadError>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    serde_path_to_error::deserialize(deserializer).map_err(|e| LoadError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

impl ModelSpec {
    /// [`deserialize_with_path`] for a `ModelSpec`: the way to load a model file.
    ///
    /// # Errors
    ///
    /// [`LoadError`] naming the field path of the problem.
    ///
    /// # Examples
    ///
    /// ```
    /// use commcost::{CommModel, Message, ModelSpec};
    ///
    /// let text = r#"{"model": "pram", "unit_cost": 1e-6}"#;
    /// let spec = ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(text))?;
    /// assert_eq!(spec.p2p(&Message::contiguous(8)), 1e-6);
    /// let typo = r#"{"model": "pram", "unit_cots": 1e-6}"#;
    /// let error = ModelSpec::deserialize_with_path(&mut serde_json::Deserializer::from_str(typo))
    ///     .unwrap_err();
    /// assert!(error.message.contains("unit_cots"));
    /// # Ok::<(), commcost::LoadError>(())
    /// ```
    pub fn deserialize_with_path<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Self, LoadError> {
        deserialize_with_path(deserializer)
    }
}

const TAGS: &[&str] = &[
    "logp",
    "loggp",
    "pram",
    "logp_protocols",
    "loggp_protocols",
    "mlines",
    "lognp",
    "log3p",
    "memory_logp",
    "memory_network_logp",
    "copy_transfer",
    "loggpo",
    "plogp",
];

/// The variant for a tag, deserialised from the rest of the map.
fn variant<'de, D: Deserializer<'de>>(tag: &str, rest: D) -> Result<ModelSpec, D::Error> {
    Ok(match tag {
        "logp" => ModelSpec::LogP(LogP::deserialize(rest)?),
        "loggp" => ModelSpec::LogGP(LogGP::deserialize(rest)?),
        "pram" => ModelSpec::Pram(Pram::deserialize(rest)?),
        "logp_protocols" => ModelSpec::LogPProtocols(Protocols::deserialize(rest)?),
        "loggp_protocols" => ModelSpec::LogGPProtocols(Protocols::deserialize(rest)?),
        "mlines" => ModelSpec::Mlines(MlinesModel::deserialize(rest)?),
        "lognp" => ModelSpec::LogNP(LogNP::deserialize(rest)?),
        "log3p" => ModelSpec::Log3P(Log3P::deserialize(rest)?),
        "memory_logp" => ModelSpec::MemoryLogP(MemoryLogP::deserialize(rest)?),
        "memory_network_logp" => {
            ModelSpec::MemoryNetworkLogP(MemoryNetworkLogP::deserialize(rest)?)
        }
        "copy_transfer" => ModelSpec::CopyTransfer(CopyTransfer::deserialize(rest)?),
        "loggpo" => ModelSpec::LogGpo(LogGpo::deserialize(rest)?),
        "plogp" => ModelSpec::PLogP(PLogP::deserialize(rest)?),
        other => return Err(de::Error::unknown_variant(other, TAGS)),
    })
}

impl<'de> Deserialize<'de> for ModelSpec {
    /// A map with a `"model"` tag. The entries after the tag are read straight from the format
    /// (so a path-tracking deserialiser sees every field); entries before it are buffered, and
    /// an error inside one names its key.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SpecVisitor)
    }
}

struct SpecVisitor;

impl<'de> Visitor<'de> for SpecVisitor {
    type Value = ModelSpec;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a model: a map with a \"model\" tag")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ModelSpec, A::Error> {
        let mut before = Vec::new();
        loop {
            let Some(key) = map.next_key::<String>()? else {
                return Err(de::Error::missing_field("model"));
            };
            if key == "model" {
                break;
            }
            if before.len() >= MAX_BUFFERED_KEYS {
                return Err(de::Error::custom(
                    "more than 64 keys before the \"model\" tag",
                ));
            }
            before.push((key, map.next_value::<Buffered>()?));
        }
        let tag: String = map.next_value()?;
        variant(
            &tag,
            de::value::MapAccessDeserializer::new(Chained {
                before: before.into_iter(),
                current: None,
                live: map,
            }),
        )
    }
}

/// Keys accepted before the tag (every model has fewer fields).
const MAX_BUFFERED_KEYS: usize = 64;

/// The entries buffered before the tag, then the live map.
struct Chained<A> {
    before: std::vec::IntoIter<(String, Buffered)>,
    current: Option<(String, Buffered)>,
    live: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Chained<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.before.next() {
            Some((key, value)) => {
                let k = seed.deserialize(key.as_str().into_deserializer())?;
                self.current = Some((key, value));
                Ok(Some(k))
            }
            None => self.live.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.current.take() {
            Some((key, value)) => seed
                .deserialize(value)
                .map_err(|e: de::value::Error| de::Error::custom(format!("{key}: {e}"))),
            None => self.live.next_value_seed(seed),
        }
    }
}

/// A self-describing value held while the tag is not yet known.
#[derive(Debug, Clone)]
enum Buffered {
    Unit,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    Seq(Vec<Buffered>),
    Map(Vec<(String, Buffered)>),
}

/// Deepest nesting buffered (a model file is a few levels deep; a hostile one is refused
/// instead of exhausting the stack).
const MAX_BUFFERED_DEPTH: usize = 32;

struct BufferedSeed(usize);

impl<'de> DeserializeSeed<'de> for BufferedSeed {
    type Value = Buffered;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Buffered, D::Error> {
        if self.0 > MAX_BUFFERED_DEPTH {
            return Err(de::Error::custom("nested deeper than 32 levels"));
        }
        d.deserialize_any(BufferedVisitor(self.0))
    }
}

impl<'de> Deserialize<'de> for Buffered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BufferedSeed(0).deserialize(d)
    }
}

struct BufferedVisitor(usize);

impl<'de> Visitor<'de> for BufferedVisitor {
    type Value = Buffered;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_unit<E>(self) -> Result<Buffered, E> {
        Ok(Buffered::Unit)
    }
    fn visit_none<E>(self) -> Result<Buffered, E> {
        Ok(Buffered::Unit)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Buffered, D::Error> {
        BufferedSeed(self.0).deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Buffered, E> {
        Ok(Buffered::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Buffered, E> {
        Ok(Buffered::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Buffered, E> {
        Ok(Buffered::I64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Buffered, E> {
        Ok(Buffered::F64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Buffered, E> {
        Ok(Buffered::Str(v.to_owned()))
    }
    fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Buffered, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(BufferedSeed(self.0 + 1))? {
            items.push(item);
        }
        Ok(Buffered::Seq(items))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Buffered, M::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            entries.push((key, map.next_value_seed(BufferedSeed(self.0 + 1))?));
        }
        Ok(Buffered::Map(entries))
    }
}

impl<'de> IntoDeserializer<'de, de::value::Error> for Buffered {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl<'de> Deserializer<'de> for Buffered {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Self::Unit => visitor.visit_unit(),
            Self::Bool(v) => visitor.visit_bool(v),
            Self::U64(v) => visitor.visit_u64(v),
            Self::I64(v) => visitor.visit_i64(v),
            Self::F64(v) => visitor.visit_f64(v),
            Self::Str(v) => visitor.visit_string(v),
            Self::Seq(items) => {
                de::value::SeqDeserializer::new(items.into_iter()).deserialize_any(visitor)
            }
            Self::Map(entries) => {
                de::value::MapDeserializer::new(entries.into_iter()).deserialize_any(visitor)
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self {
            Self::Unit => visitor.visit_none(),
            other => visitor.visit_some(other),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A document checked for repeated keys: deserialising it walks any self-describing value
/// (JSON) and fails at the first object that names a key twice, which a format's own
/// deserialisation into a map would take silently (the last one winning). Run it over a model
/// file's text before loading it.
///
/// # Errors
///
/// The format's error with the message ``duplicate key `NAME` `` (JSON adds the line and
/// column); objects nested more than 128 deep are refused too.
///
/// # Examples
///
/// ```
/// use commcost::models::spec::UniqueKeys;
///
/// let text = r#"{"model": "loggp", "latency": 5e-6, "latency": 1.0}"#;
/// let err = serde_json::from_str::<UniqueKeys>(text).unwrap_err();
/// assert!(err.to_string().contains("duplicate key `latency`"));
/// assert!(serde_json::from_str::<UniqueKeys>(r#"{"a": [{"b": 1}, {"b": 2}]}"#).is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueKeys;

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor { depth: 0 })
    }
}

/// Visits one value of a [`UniqueKeys`] check, `depth` objects and arrays deep.
struct UniqueVisitor {
    depth: u32,
}

impl<'de> DeserializeSeed<'de> for UniqueVisitor {
    type Value = UniqueKeys;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<UniqueKeys, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl UniqueVisitor {
    fn deeper<E: de::Error>(&self) -> Result<Self, E> {
        if self.depth >= 128 {
            return Err(E::custom("nested more than 128 deep"));
        }
        Ok(Self {
            depth: self.depth + 1,
        })
    }
}

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value_seed(self.deeper()?)?;
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element_seed(self.deeper()?)?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E: de::Error>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_none<E: de::Error>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
}
