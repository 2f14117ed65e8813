/** Styles for `<skald-avatar>`: eight colours that read in light and dark. */
import { css } from 'lit';

export const styles = css`
  :host {
    display: inline-flex;
    --size: 2.5rem;
  }

  :host([size='small']) {
    --size: 2rem;
  }

  :host([size='large']) {
    --size: 5rem;
  }

  .avatar {
    display: inline-flex;
    align-items: center;
    justify-content: center;
    width: var(--size);
    height: var(--size);
    border-radius: 50%;
    font-weight: 700;
    font-size: calc(var(--size) * 0.38);
    color: #fff;
    user-select: none;
    background: #5b6bb5;
  }

  .avatar[data-hue='0'] { background: #5b6bb5; }
  .avatar[data-hue='1'] { background: #2f7d6d; }
  .avatar[data-hue='2'] { background: #a2543a; }
  .avatar[data-hue='3'] { background: #7a4fa3; }
  .avatar[data-hue='4'] { background: #3d7a2f; }
  .avatar[data-hue='5'] { background: #a33d62; }
  .avatar[data-hue='6'] { background: #2f6a9a; }
  .avatar[data-hue='7'] { background: #8a6a1f; }
`;
