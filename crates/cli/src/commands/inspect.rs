//! `hinfer inspect`: what a model file holds, read without running it.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use hinfer_toolchain::{inspect, ModelSummary};

use crate::embedded;

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The .onnx file; without it, the bundled digits CNN.
    model: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Prints the summary of the model.
pub fn execute(args: InspectArgs) -> Result<()> {
    let (label, model) = match &args.model {
        Some(path) => (path.display().to_string(), inspect::load_model(path)?),
        None => (
            embedded::NAME.to_string(),
            inspect::decode_checked(embedded::model_bytes(), embedded::NAME)?,
        ),
    };
    let summary = ModelSummary::of(&model);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!("model        {label}");
        print!("{summary}");
    }
    Ok(())
}
