//! Errors of the remote commands. Findings (a diverged journal, a tampered bucket) are not
//! errors: they are reported in the commands' results and make them exit 1.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("{url}: {reason}")]
    Url { url: String, reason: String },

    #[error("object store: {op} {key}: {source}")]
    Store {
        op: &'static str,
        key: String,
        #[source]
        source: object_store::Error,
    },

    #[error("S3 {op} {url}: {reason}")]
    S3 {
        op: &'static str,
        url: String,
        reason: String,
    },

    #[error(transparent)]
    Journal(#[from] crate::Error),

    #[error("PostgreSQL: {context}: {source}")]
    Postgres {
        context: String,
        #[source]
        source: tokio_postgres::Error,
    },

    #[error("{path}: {reason}")]
    File { path: PathBuf, reason: String },

    #[error("{0}")]
    Config(String),

    /// A fault injected by a test seam (see `ship::Seam`): the process "crashed" here.
    #[error("injected crash at {0}")]
    Injected(String),
}

pub type Result<T, E = RemoteError> = std::result::Result<T, E>;

impl RemoteError {
    pub(crate) fn store(
        op: &'static str,
        key: impl Into<String>,
        source: object_store::Error,
    ) -> Self {
        RemoteError::Store {
            op,
            key: key.into(),
            source,
        }
    }

    pub(crate) fn pg(context: impl Into<String>, source: tokio_postgres::Error) -> Self {
        RemoteError::Postgres {
            context: context.into(),
            source,
        }
    }
}
