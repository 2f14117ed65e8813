//! `image_generate`: a picture made from a description by a provider an administrator set
//! a model for pictures on (§12.2), kept among the person's documents and shown in the
//! conversation. It sends the description to that provider and may cost money there, so it
//! has side effects: the approval rules decide whether the person confirms it first.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolResult};
use crate::agent::pictures;

pub struct ImageGenerate;

/// The sizes asked for: what OpenAI's models and stable-diffusion.cpp's server both make.
const SIZES: [&str; 4] = ["1024x1024", "1024x1536", "1536x1024", "512x512"];
const MAX_PROMPT_CHARS: usize = 1000;

impl Tool for ImageGenerate {
    fn name(&self) -> &'static str {
        "image_generate"
    }

    fn description(&self) -> &'static str {
        "Makes a picture from a description and keeps it among the person's documents; it shows in the conversation."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "prompt": { "type": "string", "maxLength": MAX_PROMPT_CHARS, "description": "What to draw." },
                "size": { "type": "string", "enum": SIZES }
            },
            "required": ["prompt"],
            "additionalProperties": false
        })
    }

    fn side_effects(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, arguments: Value, context: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let Some(prompt) = arguments["prompt"].as_str().map(str::trim).filter(|p| !p.is_empty()) else {
                return Err("image_generate needs \"prompt\", a description of the picture".into());
            };
            if prompt.chars().count() > MAX_PROMPT_CHARS {
                return Err(format!("a picture's description is at most {MAX_PROMPT_CHARS} characters"));
            }
            let size = arguments["size"].as_str().unwrap_or(SIZES[0]);
            if !SIZES.contains(&size) {
                return Err(format!("\"size\" is one of {}", SIZES.join(", ")));
            }
            let studio = match context.runtime.studio(&context.session).await {
                Ok(Ok(studio)) => studio,
                Ok(Err(why)) => return Err(why),
                Err(err) => return Err(format!("no picture was made: {err}")),
            };
            let made_by = format!("{}/{}", studio.endpoint.provider, studio.model);
            let png = crate::providers::openai::generate_image(
                context.runtime.client(),
                &studio.endpoint,
                &studio.model,
                prompt,
                size,
            )
            .await
            .map_err(|err| format!("{made_by} made no picture: {err}"))?;
            let document = pictures::keep(&context.space, &png, &made_by, prompt)
                .await
                .map_err(|err| format!("the picture could not be kept: {err}"))?;
            Ok(format!(
                "Made a picture with {made_by} and kept it among the person's documents as {} ({:?}); it shows in \
                 the conversation. Link to it as [{}](#/files/{}).",
                document.id, document.name, document.name, document.id
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_offers_only_sizes_both_kinds_of_server_make() {
        let schema = ImageGenerate.parameters();
        assert_eq!(schema["properties"]["size"]["enum"], json!(SIZES));
        assert_eq!(schema["required"], json!(["prompt"]));
        assert!(ImageGenerate.side_effects(), "it sends words out and may cost money");
    }
}
