use crate::{model::Spec, SpecError};
pub(crate) fn parse_text(text: &str) -> Result<Spec, SpecError> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| SpecError::new("$", e.to_string()))?;
    parse_value(&v)
}
pub(crate) fn parse_value(_v: &serde_json::Value) -> Result<Spec, SpecError> {
    Err(SpecError::new("$", "spec parser not written yet"))
}
