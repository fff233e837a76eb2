// A message's HTML in a sandboxed iframe: no scripts and an opaque origin
// (`sandbox` without allow-scripts or allow-same-origin), its page served by
// the Worker with a policy of its own (…/preview: no script, no request to any
// host). Remote images load only after the reader presses the button: each
// one would tell the sender the message was opened.
import { useEffect, useState } from 'preact/hooks';
import { Button } from '../../ui';
import '../emails/mail.css';

export function HtmlPreview({ src, title }: { /** The preview route, without `?images=`. */ src: string; title: string }) {
  const [remote, setRemote] = useState(false);
  useEffect(() => setRemote(false), [src]);
  return (
    <div>
      <div class="preview-bar">
        {remote
          ? <span class="notice-inline">Remote images are shown.</span>
          : <>
              <span class="notice-inline">Remote images are blocked: loading them tells the sender you opened the message.</span>
              <Button onClick={() => setRemote(true)}>Show remote images</Button>
            </>}
      </div>
      <iframe
        class="preview-frame"
        title={title}
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        referrerpolicy="no-referrer"
        src={`${src}?images=${remote ? 'remote' : 'blocked'}`}
      />
    </div>
  );
}
