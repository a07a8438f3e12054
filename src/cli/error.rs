//! The command line's errors: the library's, and the few only the command line can make
//! (its own input: JSON on stdin, the flags of `install`). Messages say what to do.

/// An error a command ends with (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Lib(#[from] sjournal::Error),

    /// A checkpoint or key file that is not one (or the library error reading it); boxed, as
    /// it may hold a library error whole.
    #[error(transparent)]
    Checkpoint(Box<sjournal::audit::checkpoint::Error>),

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

impl From<sjournal::audit::checkpoint::Error> for CliError {
    fn from(e: sjournal::audit::checkpoint::Error) -> Self {
        CliError::Checkpoint(Box::new(e))
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// The library error, if it is one (to tell a closed stdout from a failure).
    pub fn lib(&self) -> Option<&sjournal::Error> {
        match self {
            CliError::Lib(e) => Some(e),
            CliError::Checkpoint(c) => match &**c {
                sjournal::audit::checkpoint::Error::Journal(e) => Some(e),
                _ => None,
            },
            _ => None,
        }
    }
}
