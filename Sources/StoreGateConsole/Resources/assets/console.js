"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input[type=file][data-fills]").forEach(function (input) {
    input.addEventListener("change", function () {
      var target = document.getElementById(input.getAttribute("data-fills"));
      var file = input.files && input.files[0];
      if (!target || !file) { return; }
      file.arrayBuffer().then(function (buffer) {
        var bytes = new Uint8Array(buffer);
        var text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).trim();
        var printable = /^[A-Za-z0-9+/=._\-\s]+$/.test(text);
        if (printable) { target.value = text; return; }
        var binary = "";
        for (var i = 0; i < bytes.length; i += 1) { binary += String.fromCharCode(bytes[i]); }
        target.value = btoa(binary);
      });
    });
  });
});
