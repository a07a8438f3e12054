//! The command line's errors: the library's, and the few only the command line can make
//! (its own input: JSON on stdin, the flags of `install`). Messages say what to do.

/// An error a command ends with (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Lib(#[from] sjournal::Error),

    #[error("input is not valid JSON: {message}; nothing was appended")]
    InvalidJson {
        message: String,
        line: usize,
        column: usize,
    },

    /// A command line that names something that is not there, or asks for what cannot be
    /// done (a root that does not exist, a seq past the end, a directory in use); the message
    /// says what to do. Nothing was changed.
    #[error("{message}")]
    Usage { message: String },

    /// A host configuration could not be read or written by `install`/`uninstall`.
    #[error("{message}")]
    Install { message: String },
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// The library error, if it is one (to tell a closed stdout from a failure).
    pub fn lib(&self) -> Option<&sjournal::Error> {
        match self {
            CliError::Lib(e) => Some(e),
            _ => None,
        }
    }
}
