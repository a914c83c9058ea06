;;; next_edit_lsp_mode_scenario.el --- the next-edit mode in an lsp-mode buffer  -*- lexical-binding: t; -*-

;; Loads lsp-mode, the lsp-mode snippet and the next-edit mode, shows and accepts an inline
;; completion (lsp-mode 10's ghost text), and records that the next edit was asked for and
;; shown at once: no `qodeassist-next-edit-request' here, and batch Emacs never fires the
;; mode's idle timer, so only the accept can have asked.  Then the next edit is accepted.

(load (expand-file-name "lsp_common.el" (file-name-directory load-file-name)) nil t)

(defun qa-status (key)
  "The server's KEY section of `qodeassist/status' (a hash table)."
  (let* ((file (buffer-file-name))
         (workspace (lsp-find-workspace 'qodeassist file)))
    (with-lsp-workspace workspace
      (lsp-get (lsp-request "qodeassist/status" (make-hash-table)) key))))

(qa-run
 (lambda ()
   (qa-step "load lsp-mode, the snippet and the next-edit mode")
   (qa-lsp-load)
   (load (qa-param :snippet) nil t)
   (load (qa-param :nextEdit) nil t)
   (lsp-workspace-folders-add (qa-param :project))
   (let ((buffer (qa-visit "geo.py" (qa-param :text))))
     (qa-lsp-start buffer)
     (with-current-buffer buffer
       (qodeassist-next-edit-mode 1)
       (qa-step "show and accept an inline completion")
       (apply #'qa-goto (qa-param :inlineAt))
       (lsp-inline-completion-display)
       (qa-check lsp-inline-completion--items "no inline completion shown")
       (lsp-inline-completion-accept)
       (qa-record :acceptedLine (qa-line-text (car (qa-param :inlineAt))))
       (qa-record :timerAfterAccept (and qodeassist-next-edit--timer t))
       (qa-step "the next edit, asked for by the accept")
       (let ((overlay (qa-wait (lambda () qodeassist-next-edit--overlay) 20
                               "the next-edit overlay after the accept")))
         (qa-record :replaced (buffer-substring-no-properties (overlay-start overlay)
                                                              (overlay-end overlay)))
         (qa-record :afterString (substring-no-properties
                                  (overlay-get qodeassist-next-edit--preview 'after-string))))
       (qa-step "accept the next edit")
       (qodeassist-next-edit-accept)
       (qa-record :text (buffer-substring-no-properties (point-min) (point-max)))
       (qa-wait (lambda () (equal (lsp-get (qa-status :nextEdit) :accepted) 1))
                10 "the server to count the next edit's acceptance")
       (qa-record :nextEdit (qa-status :nextEdit))
       (qa-record :completion (qa-status :completion))

       (qa-step "shut down")
       (let* ((workspace (lsp-find-workspace 'qodeassist (buffer-file-name)))
              (process (lsp--workspace-proc workspace)))
         (lsp-workspace-shutdown workspace)
         (qa-wait (lambda () (not (process-live-p process))) 15 "the server to exit"))))))

;;; next_edit_lsp_mode_scenario.el ends here
