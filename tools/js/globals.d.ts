// What the page's modules use of htmx (static/htmx-*.js, a classic script that sets `window.htmx`).
interface Window {
  htmx?: {
    process(elt: Element): void;
    trigger(elt: Element, name: string): void;
  };
}
