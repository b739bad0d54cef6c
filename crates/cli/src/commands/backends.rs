//! `hinfer backends`: which engines this binary has and whether each loads here.

use anyhow::Result;

/// Prints one line per backend.
pub fn execute() -> Result<()> {
    for (kind, outcome) in hinfer_backends::available() {
        match outcome {
            Ok(backend) => println!("{kind:<6} available    {}", backend.describe()),
            Err(e) => println!("{kind:<6} unavailable  {e}"),
        }
    }
    Ok(())
}
