//! Passage markdown (emphasis, strong, paragraphs) to egui text, revealed a character at a time.

use bevy_egui::egui::text::{LayoutJob, TextFormat};
use bevy_egui::egui::{Color32, FontId};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// A run of text with one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub italics: bool,
    pub strong: bool,
}

/// Parse prose once; layout then only slices it.
pub fn spans(markdown: &str) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let (mut italics, mut strong) = (0u32, 0u32);
    let push = |text: &str, italics: bool, strong: bool, out: &mut Vec<Span>| match out.last_mut() {
        Some(last) if last.italics == italics && last.strong == strong => last.text.push_str(text),
        _ => out.push(Span {
            text: text.to_owned(),
            italics,
            strong,
        }),
    };
    let mut paragraphs = 0;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Paragraph) => {
                if paragraphs > 0 {
                    push("\n\n", false, false, &mut out);
                }
                paragraphs += 1;
            }
            Event::Start(Tag::Emphasis) => italics += 1,
            Event::End(TagEnd::Emphasis) => italics = italics.saturating_sub(1),
            Event::Start(Tag::Strong) => strong += 1,
            Event::End(TagEnd::Strong) => strong = strong.saturating_sub(1),
            Event::Text(text) | Event::Code(text) => push(&text, italics > 0, strong > 0, &mut out),
            Event::SoftBreak => push(" ", italics > 0, strong > 0, &mut out),
            Event::HardBreak => push("\n", italics > 0, strong > 0, &mut out),
            _ => {}
        }
    }
    out
}

/// The rendered text without styling (backlog, save summaries).
pub fn plain(markdown: &str) -> String {
    spans(markdown).iter().map(|s| s.text.as_str()).collect()
}

/// Characters in the rendered text.
pub fn char_len(spans: &[Span]) -> usize {
    spans.iter().map(|s| s.text.chars().count()).sum()
}

/// Split text into pages of whole paragraphs, each at most `max_chars` long
/// unless a single paragraph is longer, so a passage reads page by page.
pub fn pages(spans: &[Span], max_chars: usize) -> Vec<Vec<Span>> {
    let mut paragraphs: Vec<Vec<Span>> = vec![Vec::new()];
    for span in spans {
        for (i, piece) in span.text.split("\n\n").enumerate() {
            if i > 0 {
                paragraphs.push(Vec::new());
            }
            if !piece.is_empty() {
                paragraphs.last_mut().expect("never empty").push(Span {
                    text: piece.to_owned(),
                    ..span.clone()
                });
            }
        }
    }
    let mut pages: Vec<Vec<Span>> = Vec::new();
    let mut length = 0;
    for paragraph in paragraphs.into_iter().filter(|p| !p.is_empty()) {
        let n = char_len(&paragraph);
        match pages.last_mut() {
            Some(page) if length + n <= max_chars => {
                page.push(Span {
                    text: "\n\n".to_owned(),
                    italics: false,
                    strong: false,
                });
                page.extend(paragraph);
                length += n;
            }
            _ => {
                pages.push(paragraph);
                length = n;
            }
        }
    }
    if pages.is_empty() {
        pages.push(Vec::new());
    }
    pages
}

/// The first `shown` characters as an egui layout job.
pub fn layout(spans: &[Span], shown: usize, size: f32, color: Color32) -> LayoutJob {
    let mut job = LayoutJob::default();
    let mut left = shown;
    for span in spans {
        if left == 0 {
            break;
        }
        let take: String = span.text.chars().take(left).collect();
        left -= take.chars().count();
        let format = TextFormat {
            font_id: FontId::proportional(size),
            color: if span.strong { Color32::WHITE } else { color },
            italics: span.italics,
            ..TextFormat::default()
        };
        job.append(&take, 0.0, format);
    }
    job
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emphasis_and_paragraphs_become_styled_spans() {
        let parsed = spans("One *two* **three**.\n\nFour\nfive.");
        let text: String = parsed.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text, "One two three.\n\nFour five.");
        assert!(
            parsed
                .iter()
                .any(|s| s.text == "two" && s.italics && !s.strong)
        );
        assert!(parsed.iter().any(|s| s.text == "three" && s.strong));
        assert_eq!(char_len(&parsed), text.chars().count());
    }

    #[test]
    fn pages_pack_whole_paragraphs() {
        let text = "Alpha *one*.\n\nBeta two.\n\nGamma three is a longer paragraph.";
        let parsed = spans(text);
        let paged = pages(&parsed, 24);
        let plain: Vec<String> = paged
            .iter()
            .map(|p| p.iter().map(|s| s.text.as_str()).collect())
            .collect();
        assert_eq!(
            plain,
            [
                "Alpha one.\n\nBeta two.",
                "Gamma three is a longer paragraph."
            ]
        );
        assert!(paged[0].iter().any(|s| s.text == "one" && s.italics));
        assert_eq!(pages(&spans(""), 10).len(), 1);
    }

    #[test]
    fn layout_reveals_a_prefix() {
        let parsed = spans("Hello *there*");
        let job = layout(&parsed, 8, 20.0, Color32::GRAY);
        assert_eq!(job.text, "Hello th");
        assert!(job.sections.last().unwrap().format.italics);
    }
}
