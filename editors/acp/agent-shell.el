;;; agent-shell.el --- QodeAssist as an ACP agent in Emacs agent-shell  -*- lexical-binding: t; -*-
;; See docs/acp.md.  agent-shell's bundled agents are built with these same helpers; they are
;; internal to agent-shell, so check them against your version.

(defun my/qodeassist-agent-config ()
  "agent-shell configuration for QodeAssist over ACP."
  (agent-shell-make-agent-config
   :identifier 'qodeassist
   :mode-line-name "QodeAssist"
   :buffer-name "QodeAssist"
   :shell-prompt "QodeAssist> "
   :shell-prompt-regexp "QodeAssist> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client :command "qodeassist-lsp"
                                                 :command-params '("acp")
                                                 :context-buffer buffer))))

(defun my/qodeassist-agent-shell ()
  "Start a QodeAssist agent shell."
  (interactive)
  (agent-shell--dwim :config (my/qodeassist-agent-config) :new-shell t))
