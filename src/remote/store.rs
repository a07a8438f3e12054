//! A destination: an object store and a key prefix. `s3://BUCKET/PREFIX` (credentials,
//! region and endpoint from the standard AWS environment: `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`/`AWS_DEFAULT_REGION`,
//! `AWS_ENDPOINT_URL`, web identity, container and instance credentials), or `file:///DIR`
//! (a directory, for air-gapped copies and tests). Tests also use an in-memory store.
//!
//! Every write is create-only (`PutMode::Create`: `If-None-Match: *` on S3): an existing key
//! is never overwritten. Object metadata travels with the object (S3 user metadata,
//! `x-amz-meta-sj-*`); the directory backend, which has no object metadata, keeps it in a
//! `<key>.sjmeta` sidecar written after the object.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
};

use super::error::{RemoteError, Result};
use super::s3raw::{ObjectVersion, S3Raw};

/// Object metadata: `sj-*` keys to ASCII values.
pub type Meta = BTreeMap<String, String>;

const SIDECAR_EXT: &str = ".sjmeta";

/// How to reach S3 besides the bucket: endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`,
/// `AWS_ENDPOINT`; None for AWS itself), region (`AWS_REGION`, `AWS_DEFAULT_REGION`, else
/// us-east-1) and, when given explicitly, static keys (otherwise the AWS environment's
/// credential chain as `object_store` reads it).
#[derive(Debug, Clone, Default)]
pub struct S3Config {
    pub endpoint: Option<String>,
    pub region: String,
    pub keys: Option<(String, String)>,
}

impl S3Config {
    pub fn from_env() -> S3Config {
        let var = |ks: &[&str]| {
            ks.iter()
                .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        };
        S3Config {
            endpoint: var(&["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"]),
            region: var(&["AWS_REGION", "AWS_DEFAULT_REGION"])
                .unwrap_or_else(|| "us-east-1".into()),
            keys: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    /// Object metadata is stored with the object (S3, in-memory).
    Attributes,
    /// A directory: metadata in a sidecar object.
    Sidecar,
}

/// Where journals are shipped to, and the part of it a command looks at.
#[derive(Debug, Clone)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    /// Key prefix of the destination (no leading or trailing slash; may be empty).
    prefix: String,
    /// The part of the layout a command works on, relative to `prefix` (`v1/` or deeper).
    scope: String,
    backend: Backend,
    s3: Option<Arc<S3Raw>>,
    url: String,
}

/// An object read back.
#[derive(Debug, Clone)]
pub struct Object {
    pub bytes: Bytes,
    pub meta: Meta,
}

/// What a create-only write found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Created,
    /// The key already exists (HTTP 412 on S3); nothing was written.
    Exists,
}

fn url_err(url: &str, reason: impl Into<String>) -> RemoteError {
    RemoteError::Url {
        url: url.to_owned(),
        reason: reason.into(),
    }
}

/// Splits `PATH` into the destination prefix and the scope: everything from a `v1/`
/// component on is scope (`s3://b/fleet/v1/hosts/h` → prefix `fleet`, scope `v1/hosts/h/`).
fn split_scope(path: &str) -> (String, String) {
    let path = path.trim_matches('/');
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    match comps
        .iter()
        .position(|c| *c == super::layout::LAYOUT_VERSION)
    {
        Some(i) => (comps[..i].join("/"), format!("{}/", comps[i..].join("/"))),
        None => (
            comps.join("/"),
            format!("{}/", super::layout::LAYOUT_VERSION),
        ),
    }
}

impl Remote {
    /// Opens `s3://BUCKET[/PREFIX]` or `file:///DIR[/v1/...]`.
    pub fn open(url: &str) -> Result<Remote> {
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, path) = rest.split_once('/').unwrap_or((rest, ""));
            return Remote::open_s3(url, bucket, path, &S3Config::from_env());
        }
        if let Some(path) = url.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(url_err(
                    url,
                    "a file:// destination needs an absolute path (file:///DIR)",
                ));
            }
            // The directory part before any `v1/` is the store's root.
            let (dir, scope) = split_scope(path);
            let dir = format!("/{dir}");
            std::fs::create_dir_all(&dir)
                .map_err(|e| url_err(url, format!("cannot create {dir}: {e}")))?;
            let fs =
                LocalFileSystem::new_with_prefix(&dir).map_err(|e| url_err(url, e.to_string()))?;
            return Ok(Remote {
                store: Arc::new(fs),
                prefix: String::new(),
                scope,
                backend: Backend::Sidecar,
                s3: None,
                url: url.to_owned(),
            });
        }
        Err(url_err(
            url,
            "unknown destination: use s3://BUCKET/PREFIX or file:///DIR",
        ))
    }

    /// `s3://BUCKET/PATH` with an explicit configuration (tests; `open` reads the environment).
    pub fn open_s3(url: &str, bucket: &str, path: &str, cfg: &S3Config) -> Result<Remote> {
        if bucket.is_empty() {
            return Err(url_err(url, "no bucket: use s3://BUCKET/PREFIX"));
        }
        let (prefix, scope) = split_scope(path);
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_region(&cfg.region);
        if let Some(e) = &cfg.endpoint {
            b = b
                .with_endpoint(e)
                .with_allow_http(e.starts_with("http://"))
                .with_virtual_hosted_style_request(false);
        }
        if let Some((k, s)) = &cfg.keys {
            b = b.with_access_key_id(k).with_secret_access_key(s);
        }
        let s3 = b
            .build()
            .map_err(|e| url_err(url, format!("cannot use this S3 destination: {e}")))?;
        let raw = S3Raw::new(
            cfg.endpoint.clone(),
            bucket,
            &cfg.region,
            s3.credentials().clone(),
        )?;
        Ok(Remote {
            store: Arc::new(s3),
            prefix,
            scope,
            backend: Backend::Attributes,
            s3: Some(Arc::new(raw)),
            url: url.to_owned(),
        })
    }

    /// A destination on any object store whose objects keep their metadata (the in-memory
    /// store in tests). `prefix` is the key prefix, without slashes at either end.
    pub fn with_store(store: Arc<dyn ObjectStore>, prefix: &str) -> Remote {
        Remote {
            store,
            prefix: prefix.trim_matches('/').to_owned(),
            scope: format!("{}/", super::layout::LAYOUT_VERSION),
            backend: Backend::Attributes,
            s3: None,
            url: format!("memory:///{}", prefix.trim_matches('/')),
        }
    }

    /// The same destination, looking only at keys under `scope` (relative, e.g.
    /// `v1/hosts/h/`).
    pub fn scoped(&self, scope: &str) -> Remote {
        let mut r = self.clone();
        r.scope = scope.to_owned();
        r
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The underlying store (tests tamper through it).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The S3 side requests, when the destination is S3.
    pub fn s3(&self) -> Option<&Arc<S3Raw>> {
        self.s3.as_ref()
    }

    /// The store path of a key relative to the prefix.
    pub fn path(&self, key: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(key)
        } else {
            Path::from(format!("{}/{key}", self.prefix))
        }
    }

    fn relative(&self, p: &Path) -> String {
        let s = p.as_ref();
        if self.prefix.is_empty() {
            s.to_owned()
        } else {
            s.strip_prefix(&format!("{}/", self.prefix))
                .unwrap_or(s)
                .to_owned()
        }
    }

    /// Writes `key` only if it does not exist yet.
    pub async fn put_create(&self, key: &str, data: Bytes, meta: &Meta) -> Result<Put> {
        let path = self.path(key);
        let mut attrs = Attributes::new();
        if self.backend == Backend::Attributes {
            for (k, v) in meta {
                attrs.insert(Attribute::Metadata(k.clone().into()), v.clone().into());
            }
        }
        let opts = PutOptions {
            mode: PutMode::Create,
            attributes: attrs,
            ..Default::default()
        };
        match self
            .store
            .put_opts(&path, PutPayload::from_bytes(data), opts)
            .await
        {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => return Ok(Put::Exists),
            Err(e) => return Err(RemoteError::store("PUT", path.to_string(), e)),
        }
        if self.backend == Backend::Sidecar {
            self.put_sidecar(key, meta).await?;
        }
        Ok(Put::Created)
    }

    /// Directory backend: writes the metadata sidecar of `key` if it is missing (after a
    /// crash between the object and its sidecar). Metadata is a function of the object's
    /// bytes and the host key, so any writer writes the same sidecar.
    pub async fn complete_meta(&self, key: &str, meta: &Meta) -> Result<()> {
        if self.backend == Backend::Sidecar {
            self.put_sidecar(key, meta).await?;
        }
        Ok(())
    }

    async fn put_sidecar(&self, key: &str, meta: &Meta) -> Result<()> {
        let path = self.path(&format!("{key}{SIDECAR_EXT}"));
        let body = serde_json::to_vec(meta).expect("a map of strings serializes");
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self.store.put_opts(&path, body.into(), opts).await {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(RemoteError::store("PUT", path.to_string(), e)),
        }
    }

    /// Reads `key`; None if it does not exist.
    pub async fn get(&self, key: &str) -> Result<Option<Object>> {
        let path = self.path(key);
        let r = match self.store.get(&path).await {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(RemoteError::store("GET", path.to_string(), e)),
        };
        let mut meta = Meta::new();
        for (k, v) in r.attributes.iter() {
            if let Attribute::Metadata(name) = k {
                meta.insert(name.to_ascii_lowercase(), v.as_ref().to_owned());
            }
        }
        let bytes = r
            .bytes()
            .await
            .map_err(|e| RemoteError::store("GET", path.to_string(), e))?;
        if self.backend == Backend::Sidecar {
            let side = self.path(&format!("{key}{SIDECAR_EXT}"));
            match self.store.get(&side).await {
                Ok(r) => {
                    let b = r
                        .bytes()
                        .await
                        .map_err(|e| RemoteError::store("GET", side.to_string(), e))?;
                    meta = serde_json::from_slice(&b).unwrap_or_default();
                }
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(RemoteError::store("GET", side.to_string(), e)),
            }
        }
        Ok(Some(Object { bytes, meta }))
    }

    /// Keys (relative to the prefix) under `under` (relative too), sorted.
    pub async fn list(&self, under: &str) -> Result<Vec<String>> {
        let p = self.path(under.trim_end_matches('/'));
        let mut keys: Vec<String> = self
            .store
            .list(Some(&p))
            .map_ok(|m| self.relative(&m.location))
            .try_collect()
            .await
            .map_err(|e| RemoteError::store("LIST", p.to_string(), e))?;
        keys.retain(|k| !k.ends_with(SIDECAR_EXT));
        keys.sort();
        Ok(keys)
    }

    /// Every version of every key under `under`, if the store keeps versions (S3); None for
    /// stores without versions.
    pub async fn versions(&self, under: &str) -> Result<Option<Vec<ObjectVersion>>> {
        let Some(s3) = &self.s3 else { return Ok(None) };
        let p = self.path(under.trim_end_matches('/'));
        let mut v = s3.list_versions(&format!("{}/", p.as_ref())).await?;
        for o in &mut v {
            o.key = self.relative(&Path::from(o.key.as_str()));
        }
        Ok(Some(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_starts_at_the_layout_version() {
        assert_eq!(
            split_scope("fleet/v1/hosts/h"),
            ("fleet".into(), "v1/hosts/h/".into())
        );
        assert_eq!(split_scope("/a/b/"), ("a/b".into(), "v1/".into()));
        assert_eq!(split_scope(""), ("".into(), "v1/".into()));
    }
}
