//! The prompt registry: `prompts/<stage>/<version>.jinja`, rendered with minijinja.
//!
//! Each stage folder holds a `stage.ron` (what the stage does, its model tier,
//! its output contract in `schemas/`, its documented variables and sampling
//! defaults) and one template per version (`v1.jinja`, `v2.jinja`, …). A
//! template defines `{% block system %}` and `{% block user %}`; each becomes one
//! chat message. Rendering is strict: a variable the caller did not pass is an
//! error, and a variable the template uses that `stage.ron` does not document is
//! refused when the registry loads. Text several stages share (the player's
//! calibration) lives in `prompts/_partials/*.jinja`, pulled in with
//! `{% include "_partials/NAME.jinja" %}`; folders starting with `_` are not stages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use minijinja::{Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

use super::backend::{Message, Role, SamplingOverride};

/// Which of a session's two models a stage runs on (seed 003).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Small,
    Large,
}

/// A stage's `stage.ron`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageInfo {
    /// One sentence: what the stage does.
    pub description: String,
    pub tier: Tier,
    /// The output contract (a file under `schemas/`), for structured stages.
    #[serde(default)]
    pub contract: Option<String>,
    /// Every variable the templates may use, with what it holds.
    pub variables: IndexMap<String, String>,
    /// Sampling defaults for the stage.
    #[serde(default)]
    pub sampling: SamplingOverride,
    /// For a model that asks for compact prompts: the contract narrowed at
    /// these pointers (as [`super::CallRequest::narrow`]), for the decisions a
    /// tiny model cannot make well and the engine makes without it.
    #[serde(default)]
    pub compact_narrowing: IndexMap<String, serde_json::Value>,
}

/// A rendered prompt: the messages plus where they came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderedPrompt {
    pub stage: String,
    pub version: String,
    pub messages: Vec<Message>,
}

impl RenderedPrompt {
    /// `stage@version`.
    pub fn id(&self) -> String {
        format!("{}@{}", self.stage, self.version)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read the prompts folder {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    StageFile { path: PathBuf, message: String },
    #[error("{}: {source}", path.display())]
    Template {
        path: PathBuf,
        source: minijinja::Error,
    },
    #[error(
        "{}: uses the variable `{name}`, which {stage}/stage.ron does not document; add it under `variables`",
        path.display()
    )]
    UndocumentedVariable {
        path: PathBuf,
        stage: String,
        name: String,
    },
    #[error("{}: has no `{{% block user %}}`; every prompt needs the user message", path.display())]
    NoUserBlock { path: PathBuf },
    #[error("no prompt stage `{0}` (see `loreloom prompts`)")]
    UnknownStage(String),
    #[error("stage `{stage}` has no prompt version `{version}` (has: {available})")]
    UnknownVersion {
        stage: String,
        version: String,
        available: String,
    },
    #[error("rendering {stage}@{version}: {source}")]
    Render {
        stage: String,
        version: String,
        source: minijinja::Error,
    },
}

#[derive(Debug)]
struct Stage {
    info: StageInfo,
    /// Version names, oldest first (`v1`, `v2`, `v10`).
    versions: Vec<String>,
    has_system: BTreeMap<String, bool>,
    /// Per version, what its rendering depends on, hashed (see [`PromptRegistry::digest`]).
    digests: BTreeMap<String, String>,
}

/// Every prompt stage and version, compiled.
#[derive(Debug)]
pub struct PromptRegistry {
    root: PathBuf,
    env: Environment<'static>,
    stages: BTreeMap<String, Stage>,
}

impl PromptRegistry {
    /// Loads and checks every stage under `root` (usually `prompts/`).
    #[expect(
        clippy::expect_used,
        reason = "the syntax is fixed here, built in every test run"
    )]
    pub fn load(root: impl Into<PathBuf>) -> Result<Self, PromptError> {
        let root = root.into();
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .keep_trailing_newline(false)
                .build()
                .expect("the default delimiters are a valid syntax"),
        );
        let partial_sources = add_partials(&mut env, &root.join("_partials"))?;
        let mut stages = BTreeMap::new();
        for (name, entry) in stage_dirs(&root)? {
            let stage_file = entry.join("stage.ron");
            let text =
                crate::files::read_to_string(&stage_file).map_err(|source| PromptError::Io {
                    path: stage_file.clone(),
                    source,
                })?;
            let info: StageInfo = ron::from_str(&text).map_err(|e| PromptError::StageFile {
                path: stage_file.clone(),
                message: e.to_string(),
            })?;
            let mut versions = Vec::new();
            let mut has_system = BTreeMap::new();
            let mut digests = BTreeMap::new();
            for file in read_dir_sorted(&entry)? {
                let Some(version) = file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".jinja"))
                    .map(str::to_owned)
                else {
                    continue;
                };
                let source =
                    crate::files::read_to_string(&file).map_err(|source| PromptError::Io {
                        path: file.clone(),
                        source,
                    })?;
                if !has_block(&source, "user") {
                    return Err(PromptError::NoUserBlock { path: file });
                }
                has_system.insert(version.clone(), has_block(&source, "system"));
                digests.insert(version.clone(), digest(&text, &source, &partial_sources));
                let key = format!("{name}/{version}");
                env.add_template_owned(key.clone(), source)
                    .map_err(|source| PromptError::Template {
                        path: file.clone(),
                        source,
                    })?;
                let template = env
                    .get_template(&key)
                    .map_err(|source| PromptError::Template {
                        path: file.clone(),
                        source,
                    })?;
                let mut used: Vec<String> =
                    template.undeclared_variables(false).into_iter().collect();
                used.sort();
                if let Some(unknown) = used.into_iter().find(|v| {
                    !info.variables.contains_key(v) && env.globals().all(|(g, _)| g != v.as_str())
                }) {
                    return Err(PromptError::UndocumentedVariable {
                        path: file,
                        stage: name,
                        name: unknown,
                    });
                }
                versions.push(version);
            }
            versions.sort_by_key(|v| version_key(v));
            stages.insert(
                name,
                Stage {
                    info,
                    versions,
                    has_system,
                    digests,
                },
            );
        }
        Ok(Self { root, env, stages })
    }

    /// The folder the registry was loaded from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Stage names, sorted.
    pub fn stages(&self) -> impl Iterator<Item = (&str, &StageInfo, &[String])> {
        self.stages
            .iter()
            .map(|(name, s)| (name.as_str(), &s.info, s.versions.as_slice()))
    }

    pub fn stage(&self, stage: &str) -> Result<&StageInfo, PromptError> {
        self.stages
            .get(stage)
            .map(|s| &s.info)
            .ok_or_else(|| PromptError::UnknownStage(stage.to_owned()))
    }

    /// The newest version of a stage (what a new session pins).
    pub fn latest(&self, stage: &str) -> Result<&str, PromptError> {
        let s = self
            .stages
            .get(stage)
            .ok_or_else(|| PromptError::UnknownStage(stage.to_owned()))?;
        s.versions
            .last()
            .map(String::as_str)
            .ok_or_else(|| PromptError::UnknownVersion {
                stage: stage.to_owned(),
                version: "(any)".into(),
                available: "none".into(),
            })
    }

    /// The newest version of every stage: the pins a new session starts with.
    pub fn latest_pins(&self) -> BTreeMap<String, String> {
        self.stages
            .iter()
            .filter_map(|(name, s)| Some((name.clone(), s.versions.last()?.clone())))
            .collect()
    }

    /// A short hash of what `stage@version` renders from: its template, its
    /// `stage.ron` and the partials it names. A session pins it with the
    /// version, so a save opened after the file was edited can say that the
    /// stage now renders differently (`None`: no such stage or version).
    pub fn digest(&self, stage: &str, version: &str) -> Option<&str> {
        self.stages
            .get(stage)?
            .digests
            .get(version)
            .map(String::as_str)
    }

    /// Renders `stage` at `version` (the newest when `None`) with `vars`.
    pub fn render(
        &self,
        stage: &str,
        version: Option<&str>,
        vars: &serde_json::Value,
    ) -> Result<RenderedPrompt, PromptError> {
        let s = self
            .stages
            .get(stage)
            .ok_or_else(|| PromptError::UnknownStage(stage.to_owned()))?;
        let version = match version {
            Some(v) => v,
            None => self.latest(stage)?,
        };
        if !s.versions.iter().any(|v| v == version) {
            return Err(PromptError::UnknownVersion {
                stage: stage.to_owned(),
                version: version.to_owned(),
                available: s.versions.join(", "),
            });
        }
        let render_error = |source| PromptError::Render {
            stage: stage.to_owned(),
            version: version.to_owned(),
            source,
        };
        let template = self
            .env
            .get_template(&format!("{stage}/{version}"))
            .map_err(render_error)?;
        let ctx = minijinja::Value::from(minijinja::value::Serde(vars));
        let mut captured = template.render_captured(ctx).map_err(render_error)?;
        let mut messages = Vec::new();
        if s.has_system.get(version).copied().unwrap_or(false) {
            let system = captured
                .with_state_mut(|state| state.render_block("system"))
                .map_err(render_error)?;
            messages.push(Message::new(Role::System, system.trim()));
        }
        let user = captured
            .with_state_mut(|state| state.render_block("user"))
            .map_err(render_error)?;
        messages.push(Message::new(Role::User, user.trim()));
        Ok(RenderedPrompt {
            stage: stage.to_owned(),
            version: version.to_owned(),
            messages,
        })
    }
}

/// Adds every `_partials/*.jinja` under `partials` to `env`; returns each
/// one's name and source (for the digests of the templates that name them).
fn add_partials(
    env: &mut Environment<'static>,
    partials: &Path,
) -> Result<Vec<(String, String)>, PromptError> {
    let mut sources = Vec::new();
    if !crate::files::is_dir(partials) {
        return Ok(sources);
    }
    for file in read_dir_sorted(partials)? {
        if file.extension().is_none_or(|e| e != "jinja") {
            continue;
        }
        let source = crate::files::read_to_string(&file).map_err(|source| PromptError::Io {
            path: file.clone(),
            source,
        })?;
        let name = format!("_partials/{}", file_name(&file));
        sources.push((name.clone(), source.clone()));
        env.add_template_owned(name, source)
            .map_err(|source| PromptError::Template {
                path: file.clone(),
                source,
            })?;
    }
    Ok(sources)
}

/// The first 16 hex digits of the SHA-256 of a template, its stage file and
/// the partials the template names, in that order.
fn digest(stage_file: &str, template: &str, partials: &[(String, String)]) -> String {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    hash.update(stage_file.as_bytes());
    hash.update([0]);
    hash.update(template.as_bytes());
    for (name, source) in partials {
        if template.contains(name.as_str()) {
            hash.update([0]);
            hash.update(source.as_bytes());
        }
    }
    format!("{:x}", hash.finalize())[..16].to_owned()
}

fn has_block(source: &str, name: &str) -> bool {
    source.split("{%").skip(1).any(|tag| {
        let tag = tag.trim_start_matches(['-', '+']).trim_start();
        tag.strip_prefix("block")
            .is_some_and(|rest| rest.split_whitespace().next() == Some(name))
    })
}

/// Sorts `v2` before `v10`.
fn version_key(version: &str) -> (u64, String) {
    let digits: String = version.chars().filter(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(u64::MAX), version.to_owned())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every stage folder under `root` with its name: a folder holding a
/// `stage.ron`, or one inside a group folder (one without, such as
/// `author/`), named `group/stage`. Folders starting with `_` are skipped.
fn stage_dirs(root: &Path) -> Result<Vec<(String, PathBuf)>, PromptError> {
    let mut out = Vec::new();
    for entry in read_dir_sorted(root)? {
        let name = file_name(&entry);
        if !crate::files::is_dir(&entry) || name.starts_with('_') {
            continue;
        }
        if crate::files::is_file(&entry.join("stage.ron")) {
            out.push((name, entry));
            continue;
        }
        for inner in read_dir_sorted(&entry)? {
            let inner_name = file_name(&inner);
            if crate::files::is_dir(&inner) && !inner_name.starts_with('_') {
                out.push((format!("{name}/{inner_name}"), inner));
            }
        }
    }
    Ok(out)
}

/// The entries directly inside `dir`, sorted; an error when it is no folder.
fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, PromptError> {
    if !crate::files::is_dir(dir) {
        return Err(PromptError::Io {
            path: dir.to_path_buf(),
            // The error's own text names the folder already.
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such folder"),
        });
    }
    Ok(crate::files::list(dir))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use serde_json::json;

    fn registry(files: &[(&str, &str)]) -> Result<PromptRegistry, PromptError> {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let registry = PromptRegistry::load(dir.path());
        drop(dir);
        registry
    }

    const STAGE: &str = r#"(
        description: "Greets someone.",
        tier: small,
        variables: { "name": "who to greet", "items": "a list" },
        sampling: (temperature: Some(0.2)),
    )"#;

    #[test]
    fn renders_system_and_user_blocks_of_the_newest_version() {
        let reg = registry(&[
            ("greet/stage.ron", STAGE),
            ("greet/v1.jinja", "{% block user %}old {{ name }}{% endblock %}"),
            (
                "greet/v2.jinja",
                "{% block system %}\nBe kind.\n{% endblock %}\n{% block user %}\nHello {{ name }}: {{ items | tojson }}\n{% endblock %}",
            ),
            ("greet/v10.jinja", "{% block user %}ten {{ name }}{% endblock %}"),
        ])
        .unwrap();
        assert_eq!(reg.latest("greet").unwrap(), "v10");
        let p = reg
            .render(
                "greet",
                Some("v2"),
                &json!({"name": "Ada", "items": [1, 2]}),
            )
            .unwrap();
        assert_eq!(p.id(), "greet@v2");
        assert_eq!(
            p.messages,
            vec![
                Message::new(Role::System, "Be kind."),
                Message::new(Role::User, "Hello Ada: [1, 2]")
            ]
        );
        let only_user = reg
            .render("greet", Some("v1"), &json!({"name": "Bo"}))
            .unwrap();
        assert_eq!(only_user.messages, vec![Message::new(Role::User, "old Bo")]);
        assert_eq!(reg.stage("greet").unwrap().sampling.temperature, Some(0.2));
    }

    #[test]
    fn a_missing_variable_is_an_error_not_an_empty_string() {
        let reg = registry(&[
            ("greet/stage.ron", STAGE),
            (
                "greet/v1.jinja",
                "{% block user %}Hi {{ name }}{% endblock %}",
            ),
        ])
        .unwrap();
        let err = reg.render("greet", None, &json!({})).unwrap_err();
        assert!(matches!(err, PromptError::Render { .. }), "{err}");
        assert!(err.to_string().contains("greet@v1"), "{err}");
    }

    #[test]
    fn an_undocumented_variable_is_refused_at_load() {
        let err = registry(&[
            ("greet/stage.ron", STAGE),
            (
                "greet/v1.jinja",
                "{% block user %}Hi {{ name }} {{ secret }}{% endblock %}",
            ),
        ])
        .unwrap_err();
        assert!(
            matches!(&err, PromptError::UndocumentedVariable { name, .. } if name == "secret"),
            "{err}"
        );
    }

    #[test]
    fn a_prompt_without_a_user_block_is_refused() {
        let err = registry(&[
            ("greet/stage.ron", STAGE),
            ("greet/v1.jinja", "{% block system %}x{% endblock %}"),
        ])
        .unwrap_err();
        assert!(matches!(err, PromptError::NoUserBlock { .. }), "{err}");
    }

    #[test]
    fn unknown_stage_and_version_name_what_exists() {
        let reg = registry(&[
            ("greet/stage.ron", STAGE),
            (
                "greet/v1.jinja",
                "{% block user %}Hi {{ name }}{% endblock %}",
            ),
        ])
        .unwrap();
        assert!(matches!(
            reg.render("nope", None, &json!({})),
            Err(PromptError::UnknownStage(_))
        ));
        let err = reg.render("greet", Some("v9"), &json!({})).unwrap_err();
        assert!(err.to_string().contains("has: v1"), "{err}");
    }

    #[test]
    fn a_broken_stage_file_names_the_file() {
        let err = registry(&[("greet/stage.ron", "(description: ")]).unwrap_err();
        assert!(err.to_string().contains("stage.ron"), "{err}");
    }
}
