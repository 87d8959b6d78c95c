//! Skill discovery (seed 002 §3.1–§3.2, Agent Skills): `skill.json` or `SKILL.md` folders, checked.
//!
//! Skill discovery (seed 002 §3.1–§3.2, and the Agent Skills standard): each folder under a
//! `skills/` directory with a `skill.json` (checked against `schemas/skills/skill.schema.json`) or
//! an Agent Skills `SKILL.md` (YAML frontmatter `name`, `description`; its scripts from
//! `scripts/`), its `prompt.md`, `config-schema.json` and `config.json`. An invalid skill is
//! skipped with a warning naming the file. `Watcher` notices changes on disk (hot reload while the
//! game runs).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::RetryPolicy;

/// One script of a skill.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Script {
    pub name: String,
    /// Relative to the skill's folder.
    pub path: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Milliseconds (seed default 30 s).
    #[serde(default = "thirty_seconds")]
    pub timeout: u64,
    #[serde(default = "yes")]
    pub required: bool,
    /// The JSON Schema of the tool's input (as MCP's tools have one): the
    /// planner's contract holds the input to it, so constrained decoding
    /// can only write an input the script takes.
    #[serde(default)]
    pub input_schema: Option<Value>,
}

fn thirty_seconds() -> u64 {
    30_000
}
fn yes() -> bool {
    true
}
fn fifty() -> u8 {
    50
}

/// A `skill.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    pub description: String,
    pub version: String,
    #[serde(default)]
    pub author: Option<String>,
    #[serde(default)]
    pub license: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub config_schema: Option<String>,
    #[serde(default)]
    pub scripts: Vec<Script>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    #[serde(default = "fifty")]
    pub priority: u8,
    #[serde(default)]
    pub retry_policy: RetryPolicy,
    /// Moves a player might make that call for this skill (a Loreloom
    /// extension; `metadata.moves` in a `SKILL.md`): the engine routes a move
    /// to the skill when it comes close enough to one of them
    /// ([`super::route`]); a skill without any is left to the planner alone.
    #[serde(default)]
    pub moves: Vec<String>,
    /// Words that call for this skill wherever they stand in a move (a
    /// Loreloom extension, #42; `metadata.triggers` in a `SKILL.md`): whole
    /// words or phrases, case aside; a last word ending in `*` matches any
    /// word it begins (`gambl*`: gamble, gambling). The rule decides and the
    /// planner only writes the input ([`super::route`]).
    #[serde(default)]
    pub triggers: Vec<String>,
}

/// Where a skill came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `skill.json` (Narratoria's manifest).
    Manifest,
    /// `SKILL.md` (the Agent Skills standard).
    AgentSkill,
}

/// A discovered skill.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skill {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub format: Format,
    /// The behavioural prompt the planner reads.
    pub prompt: Option<String>,
    pub config_schema: Option<Value>,
    /// `config.json` (an empty object when there is none).
    pub config: Value,
    /// Shipped with Loreloom (the first folder discovery reads); a
    /// campaign's skill is not, and runs only approved and fully confined.
    pub bundled: bool,
}

impl Skill {
    /// The script a tool path names: `skill/script`, or `skill` for its first.
    pub fn script(&self, tool_path: &str) -> Option<&Script> {
        match tool_path.split_once('/') {
            Some((_, name)) => self.manifest.scripts.iter().find(|s| s.name == name),
            None => self.manifest.scripts.first(),
        }
    }

    /// Every tool path this skill answers to.
    pub fn tool_paths(&self) -> Vec<String> {
        self.manifest
            .scripts
            .iter()
            .map(|s| format!("{}/{}", self.manifest.name, s.name))
            .collect()
    }
}

/// A campaign's skill waiting for the player's approval.
#[derive(Clone, Debug)]
pub struct Waiting {
    pub skill: Skill,
    /// Its folder's hash, which an approval pins.
    pub hash: String,
}

impl Skill {
    /// What a skill is and what it would be let do, one line each, for the
    /// dialog and the terminal.
    pub fn asks(&self) -> Vec<String> {
        let skill = self;
        let m = &skill.manifest;
        let scripts: Vec<String> = m
            .scripts
            .iter()
            .map(|s| format!("{} ({})", s.name, s.path))
            .collect();
        let variables: Vec<String> = skill
            .config_schema
            .as_ref()
            .map(super::config::fields)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|f| f.env_var)
            .collect();
        vec![
        format!("{} {}: {}", m.name, m.version, m.description),
        format!("from {}", skill.dir.display()),
        format!(
            "runs: {}",
            if scripts.is_empty() {
                "no script".to_owned()
            } else {
                scripts.join(", ")
            }
        ),
        format!(
            "variables: {}",
            if variables.is_empty() {
                "none".to_owned()
            } else {
                variables.join(", ")
            }
        ),
        "reads: its own folder and the system's programs and libraries; not your files, not other skills".into(),
        "writes: only its own data folder (at most 1,000 files, 256 MiB)".into(),
        "network: never; no other program's sockets or signals".into(),
    ]
    }
}

/// What discovery found.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    pub skills: Vec<Skill>,
    /// One line per folder skipped: the file and what is wrong.
    pub warnings: Vec<String>,
    /// A campaign's skills the player has not approved (as they are now).
    pub waiting: Vec<Waiting>,
}

impl Discovery {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.manifest.name == name)
    }
}

/// A relative path that stays inside its folder (no `..`, not absolute).
pub fn inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Discovers the skills in each directory, in order, with the player's
/// approvals (`consent`): see [`discover_approved`].
pub fn discover(dirs: &[PathBuf]) -> Discovery {
    let path = super::consent::approvals_path();
    match super::consent::Approvals::load(&path) {
        Ok(approvals) => discover_approved(dirs, &approvals),
        Err(why) => {
            let mut found = discover_approved(dirs, &super::consent::Approvals::default());
            found.warnings.push(why);
            found
        }
    }
}

/// Discovers the skills in each directory with every campaign skill found
/// approved as it is now, in memory only: for tests and benches whose
/// fixtures are their own. The game never calls it.
pub fn discover_all_approved(dirs: &[PathBuf]) -> Discovery {
    let waiting = discover_approved(dirs, &super::consent::Approvals::default()).waiting;
    let approvals = super::consent::Approvals::of(
        waiting
            .iter()
            .map(|w| (w.skill.manifest.name.clone(), w.hash.clone())),
    );
    discover_approved(dirs, &approvals)
}

/// Discovers the skills in each directory, in order; the first is the
/// bundled folder, whose names a later folder's skills cannot take (they are
/// skipped with a warning); otherwise a later skill of the same name
/// replaces an earlier one. A later folder's skill runs only if `approvals`
/// holds its folder as it is now; else it waits in [`Discovery::waiting`].
pub fn discover_approved(dirs: &[PathBuf], approvals: &super::consent::Approvals) -> Discovery {
    let mut found = Discovery::default();
    // The manifest contract, read and compiled once for every folder.
    let contract = crate::llm::contract::Contract::load(
        &crate::files::resource_dir("schemas"),
        "skills/skill.schema.json",
    );
    let contract = match contract {
        Ok(c) => c,
        Err(e) => {
            found.warnings.push(format!("no skill can be checked: {e}"));
            return found;
        }
    };
    // The first folder is the bundled one: its skills' names are theirs
    // alone (#43: a campaign's `character-portraits` does not replace ours).
    let mut bundled: Vec<String> = Vec::new();
    for (at, dir) in dirs.iter().enumerate() {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            match load(&folder, &contract) {
                Ok(Some(skill)) if at > 0 && bundled.contains(&skill.manifest.name) => {
                    found.warnings.push(format!(
                        "{}: `{}` is the name of a bundled skill, which a campaign's cannot replace; skipped",
                        folder.display(),
                        skill.manifest.name
                    ));
                }
                Ok(Some(mut skill)) => {
                    if at == 0 {
                        bundled.push(skill.manifest.name.clone());
                        skill.bundled = true;
                    } else {
                        match super::consent::folder_hash(&skill.dir) {
                            Ok(hash) if approvals.holds(&skill.manifest.name, &hash) => {}
                            Ok(hash) => {
                                found
                                    .waiting
                                    .retain(|w| w.skill.manifest.name != skill.manifest.name);
                                found.waiting.push(Waiting { skill, hash });
                                continue;
                            }
                            Err(why) => {
                                found.warnings.push(format!("{why}; skipped"));
                                continue;
                            }
                        }
                    }
                    found
                        .skills
                        .retain(|s| s.manifest.name != skill.manifest.name);
                    found.skills.push(skill);
                }
                Ok(None) => {}
                Err(warning) => found.warnings.push(warning.to_string()),
            }
        }
    }
    found
}

/// Why a folder is a broken skill (it is skipped, with this as the warning).
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not JSON ({source})", path.display())]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// `skill.json` breaks `schemas/skills/skill.schema.json`.
    #[error("{}: {}; skipped", path.display(), errors.join("; "))]
    Contract { path: PathBuf, errors: Vec<String> },
    #[error("{}: {source}; skipped", path.display())]
    Manifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: {source}; skipped", path.display())]
    AgentSkill {
        path: PathBuf,
        source: AgentSkillError,
    },
    #[error(
        "{}: the name `{name}` is not the folder's (`{folder}`), as the Agent Skills standard asks; skipped",
        path.display()
    )]
    NotTheFolders {
        path: PathBuf,
        name: String,
        folder: String,
    },
    #[error(
        "{}: script `{name}` is not a file inside the skill's folder ({script}); skipped",
        path.display()
    )]
    Script {
        path: PathBuf,
        name: String,
        script: String,
    },
    #[error("{}: script `{name}`'s inputSchema is no JSON Schema ({source}); skipped", path.display())]
    InputSchema {
        path: PathBuf,
        name: String,
        source: Box<jsonschema::ValidationError<'static>>,
    },
    #[error("{}: prompt `{file}` is outside the folder; skipped", path.display())]
    PromptOutside { path: PathBuf, file: String },
    /// A config field maps a variable a skill may not have (#43).
    #[error(
        "{}: field `{field}` asks for the variable `{var}`, which a skill may not read or set (a skill's variables are named {prefix}…); skipped",
        path.display()
    )]
    Variable {
        path: PathBuf,
        field: String,
        var: String,
        prefix: String,
    },
}

/// What is wrong with a `SKILL.md`.
#[derive(Debug, thiserror::Error)]
pub enum AgentSkillError {
    #[error("no YAML frontmatter (a SKILL.md starts with ---)")]
    NoFrontmatter,
    #[error("the frontmatter is not closed with ---")]
    Unclosed,
    #[error("frontmatter: {0}")]
    Frontmatter(#[from] serde_norway::Error),
    #[error("the name `{0}` is not lowercase letters, digits and hyphens")]
    Name(String),
    #[error("no description")]
    NoDescription,
}

fn read(path: &Path) -> Result<String, SkillError> {
    crate::files::read_to_string_within(path, 1 << 20).map_err(|source| SkillError::Read {
        path: path.to_owned(),
        source,
    })
}

fn json_file(path: &Path) -> Result<Option<Value>, SkillError> {
    if !path.is_file() {
        return Ok(None);
    }
    serde_json::from_str(&read(path)?)
        .map(Some)
        .map_err(|source| SkillError::NotJson {
            path: path.to_owned(),
            source,
        })
}

/// One folder as a skill: `None` when it has neither a manifest nor a
/// `SKILL.md` (not a skill), an error naming the file when it is a broken one.
pub fn load(
    folder: &Path,
    contract: &crate::llm::contract::Contract,
) -> Result<Option<Skill>, SkillError> {
    let manifest_path = folder.join("skill.json");
    let agent_path = folder.join("SKILL.md");
    let (mut manifest, format, mut prompt) = if manifest_path.is_file() {
        let value =
            contract
                .check(&read(&manifest_path)?)
                .map_err(|errors| SkillError::Contract {
                    path: manifest_path.clone(),
                    errors,
                })?;
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|source| SkillError::Manifest {
                path: manifest_path.clone(),
                source,
            })?;
        (manifest, Format::Manifest, None)
    } else if agent_path.is_file() {
        let (manifest, body) =
            agent_skill(folder, &read(&agent_path)?).map_err(|source| SkillError::AgentSkill {
                path: agent_path.clone(),
                source,
            })?;
        (manifest, Format::AgentSkill, Some(body))
    } else {
        return Ok(None);
    };
    let named = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if format == Format::AgentSkill && manifest.name != named {
        return Err(SkillError::NotTheFolders {
            path: agent_path,
            name: manifest.name,
            folder: named.to_owned(),
        });
    }
    check_scripts(folder, &manifest_path, &mut manifest)?;
    if let Some(file) = &manifest.prompt {
        if !inside(file) {
            return Err(SkillError::PromptOutside {
                path: manifest_path,
                file: file.clone(),
            });
        }
        prompt = Some(read(&folder.join(file))?);
    } else if prompt.is_none() && folder.join("prompt.md").is_file() {
        prompt = Some(read(&folder.join("prompt.md"))?);
    }
    let schema_file = manifest
        .config_schema
        .clone()
        .unwrap_or_else(|| "config-schema.json".to_owned());
    let config_schema = if inside(&schema_file) {
        json_file(&folder.join(&schema_file))?
    } else {
        None
    };
    // #43: a skill reads (and is given) only its own variables: never the
    // player's secrets, never a loader's or a shell's.
    if let Some(schema) = &config_schema {
        let prefix = super::config::variable_prefix(&manifest.name);
        for field in super::config::fields(schema) {
            if let Some(var) = field.env_var
                && !super::config::own_variable(&manifest.name, &var)
            {
                return Err(SkillError::Variable {
                    path: folder.join(&schema_file),
                    field: field.key,
                    var,
                    prefix,
                });
            }
        }
    }
    let config = json_file(&folder.join("config.json"))?
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    Ok(Some(Skill {
        dir: folder.to_owned(),
        manifest,
        format,
        prompt,
        config_schema,
        config,
        bundled: false,
    }))
}

/// Every script is a file inside the folder, and its input schema is one.
/// A script path is read relative to the skill's folder, else (as seed
/// 002's own example, `"path": "narrate.dart"`) inside its `scripts/`; it
/// is rewritten to the one found. Either way it must really lie beneath the
/// folder (a link may not lead out).
fn check_scripts(
    folder: &Path,
    manifest_path: &Path,
    manifest: &mut Manifest,
) -> Result<(), SkillError> {
    let real_folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_owned());
    let beneath = |p: &Path| {
        p.is_file() && std::fs::canonicalize(p).is_ok_and(|real| real.starts_with(&real_folder))
    };
    for s in &mut manifest.scripts {
        let in_scripts = format!("scripts/{}", s.path);
        let found = [s.path.clone(), in_scripts]
            .into_iter()
            .find(|p| inside(p) && beneath(&folder.join(p)));
        let Some(found) = found else {
            return Err(SkillError::Script {
                path: manifest_path.to_owned(),
                name: s.name.clone(),
                script: s.path.clone(),
            });
        };
        s.path = found;
        if let Some(schema) = &s.input_schema
            && let Err(e) = jsonschema::validator_for(schema)
        {
            return Err(SkillError::InputSchema {
                path: manifest_path.to_owned(),
                name: s.name.clone(),
                source: Box::new(e),
            });
        }
    }
    Ok(())
}

/// The Agent Skills frontmatter Loreloom reads.
#[derive(Deserialize)]
struct Frontmatter {
    name: String,
    description: String,
    #[serde(default)]
    metadata: Option<serde_json::Map<String, Value>>,
}

/// A `SKILL.md` as a manifest (its scripts are the files in `scripts/`)
/// and its body, the instructions.
fn agent_skill(folder: &Path, text: &str) -> Result<(Manifest, String), AgentSkillError> {
    let rest = text
        .strip_prefix("---")
        .ok_or(AgentSkillError::NoFrontmatter)?;
    let (yaml, body) = rest.split_once("\n---").ok_or(AgentSkillError::Unclosed)?;
    let front: Frontmatter = serde_norway::from_str(yaml)?;
    if front.name.is_empty()
        || front.name.len() > 64
        || !front
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(AgentSkillError::Name(front.name));
    }
    if front.description.trim().is_empty() {
        return Err(AgentSkillError::NoDescription);
    }
    let version = front
        .metadata
        .as_ref()
        .and_then(|m| m.get("version"))
        .and_then(Value::as_str)
        .unwrap_or("0.1.0")
        .to_owned();
    let listed = |key: &str| -> Vec<String> {
        front
            .metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (moves, triggers) = (listed("moves"), listed("triggers"));
    let mut scripts = Vec::new();
    if let Ok(entries) = std::fs::read_dir(folder.join("scripts")) {
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for file in files {
            let Some(stem) = file.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let name: String = stem
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let file_name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            scripts.push(Script {
                name,
                path: format!("scripts/{file_name}"),
                description: None,
                timeout: thirty_seconds(),
                required: true,
                input_schema: None,
            });
        }
    }
    let body = body.trim_start_matches(['-', '\n']).trim().to_owned();
    Ok((
        Manifest {
            name: front.name,
            display_name: None,
            description: front.description,
            version,
            author: None,
            license: None,
            prompt: None,
            config_schema: None,
            scripts,
            capabilities: Vec::new(),
            priority: fifty(),
            retry_policy: RetryPolicy::default(),
            moves,
            triggers,
        },
        body,
    ))
}

/// What a skills directory looks like on disk: every skill folder's files
/// and scripts with their sizes and modification times, hashed.
pub fn fingerprint(dirs: &[PathBuf]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut walk = |path: &Path| {
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        path.hash(&mut hasher);
        meta.len().hash(&mut hasher);
        if let Ok(modified) = meta.modified() {
            modified.hash(&mut hasher);
        }
    };
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        folders.sort();
        for folder in folders {
            walk(&folder);
            for file in [
                "skill.json",
                "SKILL.md",
                "prompt.md",
                "config-schema.json",
                "config.json",
            ] {
                walk(&folder.join(file));
            }
            if let Ok(scripts) = std::fs::read_dir(folder.join("scripts")) {
                let mut files: Vec<PathBuf> = scripts.flatten().map(|e| e.path()).collect();
                files.sort();
                for f in files {
                    walk(&f);
                }
            }
        }
    }
    hasher.finish()
}

/// Re-discovers the skills when their folders change on disk.
#[derive(Clone, Debug)]
pub struct Watcher {
    dirs: Vec<PathBuf>,
    seen: u64,
}

impl Watcher {
    /// Watches `dirs`; the discovery as it stands now.
    pub fn new(dirs: Vec<PathBuf>) -> (Self, Discovery) {
        let found = discover(&dirs);
        (Self::watch(dirs), found)
    }

    /// Watches `dirs` from now on (their skills already discovered).
    pub fn watch(dirs: Vec<PathBuf>) -> Self {
        let seen = fingerprint(&dirs);
        Self { dirs, seen }
    }

    /// The folders watched.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// A new discovery when anything changed since the last look.
    pub fn poll(&mut self) -> Option<Discovery> {
        let now = fingerprint(&self.dirs);
        if now == self.seen {
            return None;
        }
        self.seen = now;
        Some(discover(&self.dirs))
    }
}
