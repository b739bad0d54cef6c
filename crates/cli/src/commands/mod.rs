//! One module per subcommand.

pub mod backends;
pub mod bench;
pub mod inspect;
pub mod optimize;
pub mod run;
pub mod serve;
