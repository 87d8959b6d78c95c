//! The story as an EPUB 3 book, written deterministically from the story package.
//!
//! A chapter per passage in reading order, choices as links to the passage they lead to (gated
//! ones say what they need: a book cannot hide them), endings marked, illustrations with
//! captions, the codex entries visible from the start as an appendix, a navigation document.
//! Deterministic: fixed timestamps, an identifier derived from the story's id.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::{ShipError, escape_xml as escape, media_type, reading_order};
use crate::story::model::{Passage, StoryFile};

const CSS: &str = "body { font-family: serif; line-height: 1.5; }\n\
    figure { margin: 0 0 1em; } figure img { max-width: 100%; }\n\
    figcaption { font-style: italic; font-size: 0.9em; }\n\
    ul.choices { list-style: none; padding: 0; } ul.choices li { margin: 0.4em 0; }\n\
    .needs { font-size: 0.85em; font-style: italic; }\n\
    p.end { text-align: center; letter-spacing: 0.3em; margin-top: 2em; }\n";

fn page(title: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" xmlns:epub=\"http://www.idpf.org/2007/ops\" lang=\"en\" xml:lang=\"en\">\n<head><meta charset=\"utf-8\"/><title>{}</title><link rel=\"stylesheet\" type=\"text/css\" href=\"style.css\"/></head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// The book's bytes, and notes (pictures left out).
pub fn write(file: &StoryFile, root: &Path) -> Result<(Vec<u8>, Vec<String>), ShipError> {
    let mut notes = Vec::new();
    let order = reading_order(file);
    let chapter: BTreeMap<&str, String> = order
        .iter()
        .enumerate()
        .map(|(n, &i)| (file.passages[i].id.as_str(), format!("p{}.xhtml", n + 1)))
        .collect();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut images: BTreeMap<String, &'static str> = BTreeMap::new();
    for (n, &i) in order.iter().enumerate() {
        let p = &file.passages[i];
        let heading = p.title.clone().unwrap_or_else(|| format!("{}", n + 1));
        let mut body = String::new();
        let _ = writeln!(
            body,
            "<section epub:type=\"chapter\">\n<h2>{}</h2>",
            escape(&heading)
        );
        body.push_str(&figures(file, &p.id, root, &mut images, &mut notes));
        body.push_str(&super::html::render(&p.prose));
        body.push_str(&choices(p, &chapter));
        body.push_str("</section>\n");
        files.push((
            chapter[p.id.as_str()].clone(),
            page(&heading, &body).into_bytes(),
        ));
    }
    if let Some(body) = codex_appendix(file) {
        files.push(("codex.xhtml".into(), page("Codex", &body).into_bytes()));
    }
    let start = chapter.values().next().cloned().unwrap_or_default();
    let has_codex = files.iter().any(|(n, _)| n == "codex.xhtml");
    let nav = navigation(file, &start, has_codex);
    let opf = package(file, &files, &images);
    let book = zip_book(root, &nav, &opf, &files, &images)?;
    Ok((book, notes))
}

/// The figures of the illustrations depicting a passage; each picture used is added to
/// `images`, and one a book cannot hold, or that is missing, is left out with a note.
fn figures(
    file: &StoryFile,
    passage: &str,
    root: &Path,
    images: &mut BTreeMap<String, &'static str>,
    notes: &mut Vec<String>,
) -> String {
    let mut body = String::new();
    for ill in file
        .illustrations
        .iter()
        .filter(|x| x.depicts.iter().any(|d| d == passage))
    {
        let Some(kind) = media_type(&ill.asset) else {
            notes.push(format!(
                "{} is not a picture a book can hold; left out",
                ill.asset
            ));
            continue;
        };
        if !crate::story::load::asset_in(root, &ill.asset).is_ok_and(|f| f.is_file()) {
            notes.push(format!(
                "{} (illustration `{}`) is missing; left out",
                ill.asset, ill.id
            ));
            continue;
        }
        images.insert(ill.asset.clone(), kind);
        let _ = writeln!(
            body,
            "<figure><img src=\"{}\" alt=\"{}\"/><figcaption>{}</figcaption></figure>",
            escape(&ill.asset),
            escape(&ill.caption),
            escape(&ill.caption)
        );
    }
    body
}

/// A passage's choices as links to their chapters (gated ones say what they need: a book
/// cannot hide them), or the end mark where none leaves.
fn choices(p: &Passage, chapter: &BTreeMap<&str, String>) -> String {
    if p.choices.is_empty() {
        return "<p class=\"end\">THE END</p>\n".to_owned();
    }
    let mut body = String::from("<ul class=\"choices\">\n");
    for c in &p.choices {
        let needs = if c.requires.is_empty() {
            String::new()
        } else {
            format!(
                " <span class=\"needs\">(only if you hold {})</span>",
                escape(&c.requires.join(", "))
            )
        };
        let href = chapter.get(c.to.as_str()).cloned().unwrap_or_default();
        let _ = writeln!(
            body,
            "<li><a href=\"{href}\">{}</a>{needs}</li>",
            escape(&c.label)
        );
    }
    body.push_str("</ul>\n");
    body
}

/// The appendix of the codex entries visible from the start, if there are any.
fn codex_appendix(file: &StoryFile) -> Option<String> {
    let visible: Vec<_> = file
        .codex
        .iter()
        .filter(|c| c.visible_when.is_empty())
        .collect();
    if visible.is_empty() {
        return None;
    }
    let mut body = String::from("<section epub:type=\"appendix\">\n<h2>Codex</h2>\n");
    for c in visible {
        let name = file
            .entities
            .iter()
            .find(|e| e.id == c.entity)
            .map_or(c.entity.as_str(), |e| e.name.as_str());
        let _ = writeln!(
            body,
            "<h3>{}</h3>",
            escape(c.title.as_deref().unwrap_or(name))
        );
        body.push_str(&super::html::render(&c.content));
    }
    body.push_str("</section>\n");
    Some(body)
}

/// The navigation document: the first chapter, and the codex when the book has one.
fn navigation(file: &StoryFile, start: &str, has_codex: bool) -> String {
    page(
        &file.meta.title,
        &format!(
            "<nav epub:type=\"toc\" id=\"toc\"><h1>Contents</h1><ol><li><a href=\"{start}\">Begin</a></li>{}</ol></nav>\n",
            if has_codex {
                "<li><a href=\"codex.xhtml\">Codex</a></li>"
            } else {
                ""
            }
        ),
    )
}

/// The package document (`content.opf`): metadata with a fixed timestamp and an identifier
/// derived from the story's id, the manifest of every file, the spine in reading order.
fn package(
    file: &StoryFile,
    files: &[(String, Vec<u8>)],
    images: &BTreeMap<String, &'static str>,
) -> String {
    let mut manifest = String::from(
        "<item id=\"nav\" href=\"nav.xhtml\" media-type=\"application/xhtml+xml\" properties=\"nav\"/>\n<item id=\"css\" href=\"style.css\" media-type=\"text/css\"/>\n",
    );
    let mut spine = String::new();
    for (n, (name, _)) in files.iter().enumerate() {
        let _ = writeln!(
            manifest,
            "<item id=\"c{n}\" href=\"{name}\" media-type=\"application/xhtml+xml\"/>"
        );
        let _ = writeln!(spine, "<itemref idref=\"c{n}\"/>");
    }
    for (n, (asset, kind)) in images.iter().enumerate() {
        let _ = writeln!(
            manifest,
            "<item id=\"img{n}\" href=\"{}\" media-type=\"{kind}\"/>",
            escape(asset)
        );
    }
    let identifier = format!("urn:uuid:{}", super::ifid(&file.meta.id).to_lowercase());
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\" unique-identifier=\"id\" xml:lang=\"en\">\n<metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n<dc:identifier id=\"id\">{}</dc:identifier>\n<dc:title>{}</dc:title>\n<dc:language>en</dc:language>\n{}<meta property=\"dcterms:modified\">2000-01-01T00:00:00Z</meta>\n</metadata>\n<manifest>\n{manifest}</manifest>\n<spine>\n{spine}</spine>\n</package>\n",
        identifier,
        escape(&file.meta.title),
        file.meta
            .author
            .as_ref()
            .map(|a| format!("<dc:creator>{}</dc:creator>\n", escape(a)))
            .unwrap_or_default(),
    )
}

/// The EPUB container: `mimetype` first, every entry stored with a fixed timestamp.
fn zip_book(
    root: &Path,
    nav: &str,
    opf: &str,
    files: &[(String, Vec<u8>)],
    images: &BTreeMap<String, &'static str>,
) -> Result<Vec<u8>, ShipError> {
    let container = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\">\n<rootfiles><rootfile full-path=\"OEBPS/content.opf\" media-type=\"application/oebps-package+xml\"/></rootfiles>\n</container>\n";

    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .last_modified_time(DateTime::default());
    let mut zip = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut add = |name: &str, bytes: &[u8]| -> Result<(), ShipError> {
        zip.start_file(name, options)?;
        zip.write_all(bytes).map_err(|e| ShipError::Zip(e.into()))
    };
    add("mimetype", b"application/epub+zip")?;
    add("META-INF/container.xml", container.as_bytes())?;
    add("OEBPS/content.opf", opf.as_bytes())?;
    add("OEBPS/nav.xhtml", nav.as_bytes())?;
    add("OEBPS/style.css", CSS.as_bytes())?;
    for (name, bytes) in files {
        add(&format!("OEBPS/{name}"), bytes)?;
    }
    for asset in images.keys() {
        let from = crate::story::load::asset_in(root, asset).map_err(|why| ShipError::Picture {
            asset: asset.clone(),
            source: std::io::Error::other(why),
        })?;
        let bytes = std::fs::read(from).map_err(|source| ShipError::Picture {
            asset: asset.clone(),
            source,
        })?;
        add(&format!("OEBPS/{asset}"), &bytes)?;
    }
    let cursor = zip.finish()?;
    Ok(cursor.into_inner())
}
