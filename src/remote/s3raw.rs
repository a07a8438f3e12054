//! The few S3 requests `object_store` does not make: listing object versions (auditors flag
//! any key with more than one), and creating a bucket (tests and `tools/`). Requests are
//! signed with `object_store`'s own SigV4 signer and sent through its HTTP client, with the
//! same endpoint, region and credentials as the store.

use std::sync::Arc;

use object_store::aws::{AwsAuthorizer, AwsCredentialProvider};
use object_store::client::{HttpClient, HttpConnector, HttpRequest, ReqwestConnector};
use object_store::ClientOptions;
use serde::Deserialize;

use super::error::{RemoteError, Result};

/// Where an S3 bucket is and how to sign for it.
#[derive(Debug, Clone)]
pub struct S3Raw {
    client: HttpClient,
    /// `http(s)://host[:port]` for path-style requests, None for AWS (virtual-hosted).
    endpoint: Option<String>,
    pub bucket: String,
    pub region: String,
    credentials: AwsCredentialProvider,
}

/// One version of one key, as `ListObjectVersions` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectVersion {
    pub key: String,
    pub version_id: String,
    pub is_latest: bool,
    /// A delete marker (the key was deleted in a versioned bucket).
    pub delete_marker: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListVersionsResult {
    #[serde(default)]
    is_truncated: bool,
    #[serde(default)]
    next_key_marker: Option<String>,
    #[serde(default)]
    next_version_id_marker: Option<String>,
    #[serde(default, rename = "Version")]
    versions: Vec<Entry>,
    #[serde(default, rename = "DeleteMarker")]
    delete_markers: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Entry {
    key: String,
    #[serde(default)]
    version_id: String,
    #[serde(default)]
    is_latest: bool,
}

fn encode(s: &str) -> String {
    // RFC 3986 unreserved characters stay; everything else is percent-encoded (SigV4 rules).
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl S3Raw {
    pub fn new(
        endpoint: Option<String>,
        bucket: &str,
        region: &str,
        credentials: AwsCredentialProvider,
    ) -> Result<S3Raw> {
        let allow_http = endpoint
            .as_deref()
            .is_some_and(|e| e.starts_with("http://"));
        let client = ReqwestConnector::default()
            .connect(&ClientOptions::new().with_allow_http(allow_http))
            .map_err(|e| RemoteError::S3 {
                op: "connect",
                url: endpoint.clone().unwrap_or_default(),
                reason: e.to_string(),
            })?;
        Ok(S3Raw {
            client,
            endpoint: endpoint.map(|e| e.trim_end_matches('/').to_owned()),
            bucket: bucket.to_owned(),
            region: region.to_owned(),
            credentials,
        })
    }

    fn bucket_url(&self) -> String {
        match &self.endpoint {
            Some(e) => format!("{e}/{}", self.bucket),
            None => format!("https://{}.s3.{}.amazonaws.com", self.bucket, self.region),
        }
    }

    async fn send(
        &self,
        op: &'static str,
        method: http::Method,
        url: String,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<(u16, Vec<u8>)> {
        let err = |reason: String| RemoteError::S3 {
            op,
            url: url.clone(),
            reason,
        };
        let mut b = http::Request::builder().method(method).uri(&url);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let mut req: HttpRequest = b.body(body.into()).map_err(|e| err(e.to_string()))?;
        let cred = self
            .credentials
            .get_credential()
            .await
            .map_err(|e| err(format!("no credentials: {e}")))?;
        AwsAuthorizer::new(&cred, "s3", &self.region)
            .try_authorize(&mut req, None)
            .map_err(|e| err(e.to_string()))?;
        let resp = self
            .client
            .execute(req)
            .await
            .map_err(|e| err(e.to_string()))?;
        let status = resp.status().as_u16();
        let bytes = resp
            .into_body()
            .bytes()
            .await
            .map_err(|e| err(e.to_string()))?;
        Ok((status, bytes.to_vec()))
    }

    /// Every version and delete marker of every key under `prefix`.
    pub async fn list_versions(&self, prefix: &str) -> Result<Vec<ObjectVersion>> {
        let mut out = Vec::new();
        let mut marker: Option<(String, String)> = None;
        loop {
            let mut url = format!("{}?prefix={}&versions", self.bucket_url(), encode(prefix));
            if let Some((k, v)) = &marker {
                url.push_str(&format!(
                    "&key-marker={}&version-id-marker={}",
                    encode(k),
                    encode(v)
                ));
            }
            let (status, body) = self
                .send(
                    "ListObjectVersions",
                    http::Method::GET,
                    url.clone(),
                    &[],
                    Vec::new(),
                )
                .await?;
            let text = String::from_utf8_lossy(&body);
            if status != 200 {
                return Err(RemoteError::S3 {
                    op: "ListObjectVersions",
                    url,
                    reason: format!("HTTP {status}: {}", text.trim()),
                });
            }
            let r: ListVersionsResult =
                quick_xml::de::from_str(&text).map_err(|e| RemoteError::S3 {
                    op: "ListObjectVersions",
                    url: url.clone(),
                    reason: format!("unreadable answer: {e}"),
                })?;
            for (entries, delete_marker) in [(r.versions, false), (r.delete_markers, true)] {
                out.extend(entries.into_iter().map(|e| ObjectVersion {
                    key: e.key,
                    version_id: e.version_id,
                    is_latest: e.is_latest,
                    delete_marker,
                }));
            }
            match (r.is_truncated, r.next_key_marker) {
                (true, Some(k)) => marker = Some((k, r.next_version_id_marker.unwrap_or_default())),
                _ => break,
            }
        }
        Ok(out)
    }

    /// Creates the bucket. With `object_lock`, under Object Lock (which also turns versioning
    /// on); otherwise with versioning enabled, so that rewrites stay visible.
    pub async fn create_bucket(&self, object_lock: bool) -> Result<()> {
        let url = self.bucket_url();
        let lock = [("x-amz-bucket-object-lock-enabled", "true")];
        let headers: &[(&str, &str)] = if object_lock { &lock } else { &[] };
        let (status, body) = self
            .send(
                "CreateBucket",
                http::Method::PUT,
                url.clone(),
                headers,
                Vec::new(),
            )
            .await?;
        if status != 200 {
            return Err(RemoteError::S3 {
                op: "CreateBucket",
                url,
                reason: format!("HTTP {status}: {}", String::from_utf8_lossy(&body).trim()),
            });
        }
        if !object_lock {
            let body = b"<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>Enabled</Status></VersioningConfiguration>".to_vec();
            let url = format!("{}?versioning", self.bucket_url());
            let (status, answer) = self
                .send(
                    "PutBucketVersioning",
                    http::Method::PUT,
                    url.clone(),
                    &[],
                    body,
                )
                .await?;
            if status != 200 {
                return Err(RemoteError::S3 {
                    op: "PutBucketVersioning",
                    url,
                    reason: format!("HTTP {status}: {}", String::from_utf8_lossy(&answer).trim()),
                });
            }
        }
        Ok(())
    }
}

/// Shared by [`super::store::Remote`] and tests.
pub type Shared = Arc<S3Raw>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_interleaved_versions_and_delete_markers() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>p</Prefix>
<IsTruncated>false</IsTruncated>
<Version><Key>a</Key><VersionId>2</VersionId><IsLatest>true</IsLatest><Size>3</Size></Version>
<DeleteMarker><Key>b</Key><VersionId>9</VersionId><IsLatest>true</IsLatest></DeleteMarker>
<Version><Key>a</Key><VersionId>1</VersionId><IsLatest>false</IsLatest><Size>3</Size></Version>
</ListVersionsResult>"#;
        let r: ListVersionsResult = quick_xml::de::from_str(xml).unwrap();
        assert_eq!(r.versions.len(), 2);
        assert_eq!(r.delete_markers.len(), 1);
        assert_eq!(encode("v1/a b"), "v1%2Fa%20b");
    }
}
