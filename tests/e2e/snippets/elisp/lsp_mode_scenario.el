;;; lsp_mode_scenario.el --- editors/emacs/qodeassist-lsp-mode.el in a real Emacs  -*- lexical-binding: t; -*-

;; Loads lsp-mode (Debian's elpa-lsp-mode) and the snippet, starts the server through lsp-mode
;; and uses it as a user does: inline completion (display + accept), completion-at-point, the
;; refactor code actions, the instruction command, chat and status.

(load (expand-file-name "lsp_common.el" (file-name-directory load-file-name)) nil t)

(defun qa-lsp-capf-candidate ()
  "Complete at point until the qodeassist candidate shows up; accept it.  Return (TEXT . ITEM)."
  (let (capf candidate)
    (qa-wait
     (lambda ()
       (setq capf (lsp-completion-at-point))
       (let ((prefix (buffer-substring-no-properties (nth 0 capf) (point))))
         (setq candidate
               (cl-find-if (lambda (c)
                             (equal (lsp-get (get-text-property 0 'lsp-completion-item c)
                                             :detail)
                                    "qodeassist"))
                           (all-completions prefix (nth 2 capf)))))
       (or candidate (progn (accept-process-output nil 0.1) nil)))
     15 "a qodeassist candidate from completion-at-point")
    (let ((item (get-text-property 0 'lsp-completion-item candidate))
          (exit (plist-get (nthcdr 3 capf) :exit-function)))
      (delete-region (nth 0 capf) (nth 1 capf))
      (goto-char (nth 0 capf))
      (insert candidate)
      (funcall exit candidate 'finished)
      (cons (substring-no-properties candidate) item))))

(defun qa-completion-status ()
  "The completion part of the server's `qodeassist/status' (warm-ups, requests in flight)."
  (lsp-get (lsp-request "qodeassist/status" (make-hash-table)) :completion))

(qa-run
 (lambda ()
   (qa-step "load lsp-mode and the snippet")
   (qa-lsp-load)
   (load (qa-param :snippet) nil t)
   (qa-record :lspModeVersion (lsp-version))
   (let ((client (gethash 'qodeassist lsp-clients)))
     (qa-check client "the snippet registered no `qodeassist' client")
     (qa-record :addOn (and (lsp--client-add-on? client) t))
     (qa-record :command (vconcat qodeassist-lsp-command))
     (qa-record :resolved (executable-find (car qodeassist-lsp-command)))
     (qa-record :initializationOptions
                (funcall (lsp--client-initialization-options client))))
   (qa-record :configurationAnswer (lsp-configuration-section "qodeassist"))

   (qa-step "start lsp-mode on a Python file")
   (lsp-workspace-folders-add (qa-param :project))
   (let ((buffer (qa-visit "add.py" (qa-param :completionText))))
     (qa-lsp-start buffer)
     (with-current-buffer buffer
       (qa-record :inlineMode (and (bound-and-true-p lsp-inline-completion-mode) t))
       (qa-record :features
                  (list :inlineCompletion (and (lsp-feature? "textDocument/inlineCompletion") t)
                        :completion (and (lsp-feature? "textDocument/completion") t)
                        :codeAction (and (lsp-feature? "textDocument/codeAction") t)
                        :codeActionResolve (and (lsp-feature? "codeAction/resolve") t)))

       (qa-step "inline completion: display and accept")
       (apply #'qa-goto (qa-param :inlineAt))
       (lsp-inline-completion-display)
       (qa-check lsp-inline-completion--items "no inline completion shown")
       (qa-record :ghostText
                  (substring-no-properties
                   (or (overlay-get lsp-inline-completion--overlay 'after-string) "")))
       (lsp-inline-completion-accept)
       (qa-record :inlineLine (qa-line-text (car (qa-param :inlineAt))))

       (qa-step "completion-at-point")
       (apply #'qa-goto (qa-param :completionAt))
       (let ((accepted (qa-lsp-capf-candidate)))
         (qa-record :candidate (car accepted)))
       (qa-record :completedLine (qa-line-text (car (qa-param :completionAt))))))

   (qa-step "refactor code actions on a region")
   (let ((buffer (qa-visit "total.py" (qa-param :refactorText))))
     (qa-lsp-start buffer)
     (with-current-buffer buffer
       (transient-mark-mode 1)
       (apply #'qa-goto (qa-param :selectionStart))
       (push-mark (point) t t)
       (apply #'qa-goto (qa-param :selectionEnd))
       (qa-record :actionTitles
                  (vconcat (mapcar (lambda (a) (lsp-get a :title))
                                   (lsp-code-actions-at-point "refactor.rewrite"))))
       (let ((completing-read-function
              (lambda (_prompt collection &rest _)
                (qa-check (member "QodeAssist: Improve" (all-completions "" collection))
                          "no Improve action offered")
                "QodeAssist: Improve")))
         (qodeassist-lsp-refactor))
       (deactivate-mark)
       (qa-record :afterImprove (buffer-substring-no-properties (point-min) (point-max)))

       (qa-step "qodeassist-lsp-refactor-with-instruction")
       (let ((before (buffer-substring-no-properties (point-min) (point-max))))
         (qodeassist-lsp-refactor-with-instruction
          (progn (qa-goto 1 0) (point)) (line-end-position) (qa-param :instruction))
         (qa-wait (lambda () (not (equal before (buffer-substring-no-properties
                                                  (point-min) (point-max)))))
                  20 "the instruction's edit to arrive through workspace/applyEdit")
         (qa-record :afterInstruction
                    (buffer-substring-no-properties (point-min) (point-max))))))

   (with-current-buffer "add.py"
     (qa-step "chat")
     (qodeassist-lsp-chat (qa-param :chatMessage))
     (qa-wait (lambda ()
                (with-current-buffer (get-buffer-create qodeassist-lsp-chat-buffer)
                  (string-match-p "\\[\\(finished\\|failed\\)" (buffer-string))))
              20 "the chat answer to finish")
     (qa-record :chatBuffer (with-current-buffer qodeassist-lsp-chat-buffer
                              (buffer-substring-no-properties (point-min) (point-max))))

     (qa-step "status")
     (qa-record :statusNotified (and qodeassist-lsp-status t))
     (qa-record :status (qodeassist-lsp-status))
     (qa-record :lighter (qodeassist-lsp--lighter))

     (qa-step "tell the server where point rests (what the idle timer runs)")
     (qa-record :cursorTimer (and (memq qodeassist-lsp--cursor-timer timer-idle-list) t))
     (apply #'qa-goto (qa-param :caretAt))
     (let ((before (lsp-get (qa-completion-status) :warmUps)))
       (qa-record :toldFirst (qodeassist-lsp--tell-cursor))
       (qa-record :toldAgain (qodeassist-lsp--tell-cursor))
       ;; Idle cache warming sends the request at the caret once the user is idle: wait until
       ;; it was sent and answered (the model has seen it), however long a busy machine takes.
       (qa-wait (lambda ()
                  (let ((completion (qa-completion-status)))
                    (and (> (lsp-get completion :warmUps) before)
                         (zerop (lsp-get completion :inFlight)))))
                30 "the warm-up at the caret to reach the model"))

     (qa-step "shut down")
     (let* ((workspace (car (lsp-workspaces)))
            (process (lsp--workspace-proc workspace)))
       (lsp-workspace-shutdown workspace)
       (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit")))))

;;; lsp_mode_scenario.el ends here
