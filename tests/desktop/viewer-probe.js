// Runs inside the desktop window (the shell's SKALD_TEST_SCRIPT hook, debug builds only):
// logs in as Ada through the login picker as a person would, asks for the microphone, opens
// the PDF the smoke test uploaded, and reports what the viewer drew and what the window
// answered about the microphone. It reports by sending the window to another
// origin: the shell cancels that navigation and hands the address to the system opener,
// which the smoke test replaced with one that records it. inside.sh fills __DOCUMENT__ and
// __PASSWORD__ with JSON string literals.
(async () => {
  const documentId = __DOCUMENT__;
  const password = __PASSWORD__;
  const report = (fields) => {
    window.location.href = `https://example.invalid/probe?${new URLSearchParams(fields)}`;
  };
  // Every element matching `selector`, through every open shadow root.
  const all = (selector, root = document) => {
    const found = [...root.querySelectorAll(selector)];
    for (const element of root.querySelectorAll('*')) {
      if (element.shadowRoot) found.push(...all(selector, element.shadowRoot));
    }
    return found;
  };
  const until = async (what, check, ms = 45000) => {
    const end = Date.now() + ms;
    for (;;) {
      const value = check();
      if (value) return value;
      if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    (await until('Ada on the login picker', () => all('[data-testid=person][data-name=Ada]')[0])).click();
    const field = await until('the password field', () => all('#password')[0]);
    field.value = password;
    field.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    const form = await until('the login form', () => all('[data-testid=login-form]')[0]);
    await until('the login button to be enabled', () => !form.querySelector('button[type=submit]').disabled);
    form.requestSubmit();
    await until('the workspace', () => all('[data-screen=workspace]')[0]);

    // The microphone, as the composer's voice input asks for it: the window grants it to
    // Skald's own page (the shell's permission handler; WebKit's mock devices stand in for
    // a microphone under Xvfb).
    let microphone;
    try {
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      microphone = stream.getAudioTracks().length > 0 ? 'granted' : 'no audio track';
      for (const track of stream.getTracks()) track.stop();
    } catch (err) {
      microphone = `${err && err.name ? err.name : 'error'}: ${err && err.message ? err.message : err}`;
    }

    window.location.hash = `#/files/${documentId}`;
    const layer = await until('the text layer to hold the first page’s words', () =>
      all('.textLayer').find((element) => element.textContent.includes('Café')),
    );
    const canvas = all('[data-testid=pdf-canvas]')[0];
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let dark = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 128 && data[i + 3] > 0) dark += 1;
    const pageOf = all('[data-testid=page-of]')[0];
    report({
      dark: String(dark),
      words: layer.textContent.replace(/\s+/g, ' ').trim(),
      page: pageOf ? pageOf.textContent.trim() : '',
      microphone,
    });
  } catch (err) {
    report({ error: String(err && err.message ? err.message : err) });
  }
})();
