// The console's only script (served by assets.ts; the CSP allows no inline script). Pages work without it:
// it adds the upload progress bar (the PUT goes to the upload URL the registry API issues) and copy buttons.

export const consoleJs = `"use strict";
(function () {
  function uploadForm(form) {
    var input = form.querySelector("input[type=file]");
    var bar = form.querySelector("progress");
    var status = form.querySelector("[data-upload-status]");
    form.addEventListener("submit", function (event) {
      if (!input || !input.files || input.files.length !== 1) return;
      event.preventDefault();
      var file = input.files[0];
      var button = form.querySelector("button");
      if (button) button.disabled = true;
      status.textContent = "Preparing upload…";
      var data = new URLSearchParams();
      form.querySelectorAll("input[type=hidden]").forEach(function (h) { data.append(h.name, h.value); });
      fetch(form.action, {
        method: "POST",
        headers: { "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded" },
        body: data.toString(),
        credentials: "same-origin"
      }).then(function (r) {
        return r.json().then(function (j) { if (!r.ok) throw new Error((j.errors || ["Upload refused"]).join("; ")); return j; });
      }).then(function (prepared) {
        var xhr = new XMLHttpRequest();
        xhr.open("PUT", prepared.upload_path);
        xhr.setRequestHeader("Content-Type", "application/octet-stream");
        bar.hidden = false;
        bar.max = file.size || 1;
        xhr.upload.addEventListener("progress", function (e) {
          if (e.lengthComputable) {
            bar.max = e.total; bar.value = e.loaded;
            status.textContent = "Uploading… " + Math.floor((e.loaded / e.total) * 100) + " %";
          }
        });
        xhr.addEventListener("load", function () {
          if (xhr.status >= 200 && xhr.status < 300) {
            bar.value = bar.max;
            status.textContent = "Upload complete.";
            window.location.assign(prepared.done || window.location.href);
          } else {
            var message = "Upload failed (" + xhr.status + ")";
            try { message += ": " + JSON.parse(xhr.responseText).errors.join("; "); } catch (_) {}
            status.textContent = message;
            if (button) button.disabled = false;
          }
        });
        xhr.addEventListener("error", function () {
          status.textContent = "Upload failed: the connection was lost.";
          if (button) button.disabled = false;
        });
        xhr.send(file);
      }).catch(function (err) {
        status.textContent = String(err.message || err);
        if (button) button.disabled = false;
      });
    });
  }
  document.querySelectorAll("form[data-upload]").forEach(uploadForm);
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (target && navigator.clipboard) {
        navigator.clipboard.writeText(target.textContent || "").then(function () { button.textContent = "Copied"; });
      }
    });
  });
})();
`;
