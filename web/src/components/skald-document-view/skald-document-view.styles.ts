/**
 * Styles for `<skald-document-view>`, with pdf.js's text layer: the rules of its
 * `web/pdf_viewer.css` the layer needs, said here because the viewer is in shadow DOM and
 * the page's CSP refuses the <style> pdf.js would otherwise bring.
 */
import { css } from 'lit';

export const styles = css`
  :host {
    display: block;
  }

  h3 {
    margin: 0 0 var(--skald-space-1);
    font-size: 1.4rem;
    line-height: 1.3;
    overflow-wrap: anywhere;
  }

  h3:focus {
    outline: none;
  }

  h3:focus-visible {
    outline: 0.2rem solid var(--skald-focus);
  }

  .back {
    display: inline-block;
    margin-bottom: var(--skald-space-2);
    color: var(--skald-accent);
  }

  .facts {
    margin: 0 0 var(--skald-space-2);
  }

  .by {
    display: block;
    font-size: 0.9rem;
  }

  .status {
    margin: 0 0 var(--skald-space-2);
    overflow-wrap: anywhere;
  }

  .status[data-status='no_text'] {
    color: var(--skald-warn);
  }

  .status[data-status='failed'] {
    color: var(--skald-error);
  }

  .actions {
    margin-bottom: var(--skald-space-3);
  }

  .pager {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: var(--skald-space-2);
    margin-bottom: var(--skald-space-3);
  }

  .page-of {
    margin: 0;
    font-variant-numeric: tabular-nums;
  }

  .page-of:focus {
    outline: none;
  }

  .page-of:focus-visible {
    outline: 0.2rem solid var(--skald-focus);
  }

  .content {
    min-width: 0;
  }

  pre.page-text {
    max-height: none;
    font-size: 0.95rem;
    line-height: 1.5;
  }

  .markdown {
    max-width: 48rem;
  }

  .image {
    display: block;
    max-width: 100%;
    height: auto;
    border: 1px solid var(--skald-border);
    border-radius: var(--skald-radius);
    background: var(--skald-surface);
  }

  /* The page keeps its own width (set by pdf/render.ts); a narrow window scrolls to it. */
  .pdf-frame {
    width: 100%;
    overflow-x: auto;
  }

  .pdf-page {
    position: relative;
    width: max-content;
    margin: 0 auto;
    border: 1px solid var(--skald-border);
    box-shadow: var(--skald-shadow);
    /* A PDF page is paper: white in the dark theme too, as it was written. */
    background: #fff;
  }

  .pdf-page canvas {
    display: block;
  }

  /* pdf.js's text layer (pdf_viewer.css), its custom properties named as the layer reads them. */
  .textLayer {
    --user-unit: 1;
    --total-scale-factor: calc(var(--scale-factor, 1) * var(--user-unit));
    --scale-round-x: 1px;
    --scale-round-y: 1px;
    --min-font-size: 1;
    --text-scale-factor: calc(var(--total-scale-factor) * var(--min-font-size));
    --min-font-size-inv: calc(1 / var(--min-font-size));
    color-scheme: only light;
    position: absolute;
    text-align: initial;
    inset: 0;
    overflow: clip;
    opacity: 1;
    line-height: 1;
    letter-spacing: normal;
    word-spacing: normal;
    -webkit-text-size-adjust: none;
    text-size-adjust: none;
    forced-color-adjust: none;
    transform-origin: 0 0;
    caret-color: CanvasText;
    z-index: 0;
  }

  .textLayer span,
  .textLayer br {
    color: transparent;
    position: absolute;
    white-space: pre;
    cursor: text;
    transform-origin: 0% 0%;
    -webkit-user-select: text;
    user-select: text;
  }

  .textLayer > :not(.markedContent),
  .textLayer .markedContent span:not(.markedContent) {
    z-index: 1;
    --font-height: 0;
    font-size: calc(var(--text-scale-factor) * var(--font-height));
    --scale-x: 1;
    --rotate: 0deg;
    transform: rotate(var(--rotate)) scaleX(var(--scale-x)) scale(var(--min-font-size-inv));
  }

  .textLayer .markedContent {
    display: contents;
  }

  .textLayer span[role='img'] {
    -webkit-user-select: none;
    user-select: none;
    cursor: default;
  }

  .textLayer ::selection {
    background: rgba(0, 0, 255, 0.25);
    background: color-mix(in srgb, AccentColor, transparent 50%);
    color: transparent;
  }

  .textLayer br::selection {
    background: transparent;
  }

  .textLayer .endOfContent {
    display: block;
    position: absolute;
    inset: 100% 0 0;
    z-index: 0;
    cursor: default;
    -webkit-user-select: none;
    user-select: none;
  }

  .textLayer.selecting .endOfContent {
    top: 0;
  }

  [data-main-rotation='90'] {
    transform: rotate(90deg) translateY(-100%);
  }

  [data-main-rotation='180'] {
    transform: rotate(180deg) translate(-100%, -100%);
  }

  [data-main-rotation='270'] {
    transform: rotate(270deg) translateX(-100%);
  }
`;
