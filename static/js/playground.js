/* The chat playground over its websocket (chat/consumers.py PlaygroundConsumer): the message
   goes out as {"message": …}; the server answers with the context it sends the model
   ({"type": "context", "html"}), the reply in pieces ({"type": "chunk", "text"}) and
   {"type": "done"} once the turn is stored. While the socket is not open the form posts
   normally and the page comes back with the whole reply. */
(function () {
  "use strict";

  var form = document.getElementById("chat-form");
  if (!form || !window.WebSocket) return;
  var log = document.getElementById("chat-log");
  var panel = document.getElementById("chat-context");
  var input = form.querySelector("textarea[name=message]");
  var send = document.getElementById("chat-send");
  var status = document.getElementById("chat-status");
  var errorBox = document.getElementById("chat-error");

  var socket = null;
  var delay = 1000;
  var busy = false;
  var reply = null; // the assistant bubble being streamed into

  function setStatus(text) { status.textContent = text || ""; }

  function showError(text) {
    errorBox.textContent = text || "";
    errorBox.hidden = !text;
  }

  function bubble(role, text) {
    var empty = document.getElementById("chat-empty");
    if (empty) empty.remove();
    var item = document.createElement("li");
    item.className = "chat-message chat-" + role;
    var label = document.createElement("span");
    label.className = "chat-role";
    label.textContent = role === "user" ? "You" : "Assistant";
    var body = document.createElement("div");
    body.className = "chat-text";
    body.textContent = text || "";
    item.appendChild(label);
    item.appendChild(body);
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  function finish() {
    busy = false;
    send.disabled = false;
    if (reply) reply.classList.remove("is-streaming");
    reply = null;
  }

  function onMessage(message) {
    if (message.type === "context") {
      // the model picked for the context-window bar stays picked for the new turn's panel
      var picked = panel.querySelector("[data-window-select]");
      var pick = picked ? picked.value : "";
      panel.innerHTML = message.html; // rendered and escaped by the server's template
      var select = panel.querySelector("[data-window-select]");
      if (select && pick && select.querySelector('option[value="' + CSS.escape(pick) + '"]')) {
        select.value = pick;
        if (window.memoryweb) window.memoryweb.redrawWindow(select.closest("[data-window-meter]"));
      }
      reply = bubble("assistant", "");
      reply.classList.add("is-streaming");
      setStatus(message.model === "none" ? "No model configured" : "Waiting for " + message.model + "…");
    } else if (message.type === "chunk") {
      if (!reply) reply = bubble("assistant", "");
      reply.querySelector(".chat-text").textContent += message.text;
      log.scrollTop = log.scrollHeight;
    } else if (message.type === "done") {
      if (reply && !message.answered && message.model === "none") reply.classList.add("chat-notice");
      if (reply && !message.reply) reply.remove();
      setStatus(
        message.failed ? "The model did not answer (" + message.failed + "); your message was stored."
          : message.truncated ? "The reply was cut at the token limit. Stored."
          : "Stored; reflection runs in the background."
      );
      finish();
    } else if (message.type === "error") {
      if (reply && !reply.querySelector(".chat-text").textContent) reply.remove();
      showError(message.error);
      setStatus("");
      finish();
    }
  }

  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + form.dataset.wsPath);
    socket.addEventListener("open", function () { delay = 1000; form.dataset.socket = "open"; });
    socket.addEventListener("message", function (event) {
      try { onMessage(JSON.parse(event.data)); } catch (e) { /* not JSON: ignore */ }
    });
    socket.addEventListener("close", function (event) {
      socket = null;
      form.dataset.socket = "closed";
      if (busy) {
        showError("The connection dropped before the reply finished. Reload to see what was stored.");
        finish();
      }
      if (event.code === 4401 || event.code === 4404) return;
      window.setTimeout(connect, delay + Math.floor(Math.random() * 500));
      delay = Math.min(delay * 2, 30000);
    });
  }

  form.addEventListener("submit", function (event) {
    if (!socket || socket.readyState !== WebSocket.OPEN) return; // plain POST instead
    event.preventDefault();
    if (busy) return;
    var text = input.value.trim();
    if (!text) { showError("Write a message first."); input.focus(); return; }
    showError("");
    busy = true;
    send.disabled = true;
    bubble("user", text);
    setStatus("Building the memory context…");
    socket.send(JSON.stringify({ message: text }));
    input.value = "";
    input.focus(); // ready for the next message (the button is disabled until the reply ends)
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });

  // open on the newest turn, not the top of the page (a phone shows the log below the notice)
  if (log.lastElementChild && !document.getElementById("chat-empty")) {
    log.scrollTop = log.scrollHeight;
    log.lastElementChild.scrollIntoView({ block: "nearest" });
  }

  connect();
})();
