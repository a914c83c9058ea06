;;; next_edit_scenario.el --- editors/emacs/qodeassist-next-edit.el in a real Emacs  -*- lexical-binding: t; -*-

;; Loads the Eglot snippet and the next-edit mode, lets Eglot start the server, renames a
;; function in its definition, asks for the next edit (the on-demand command: batch Emacs never
;; fires the mode's idle timer), and records the overlay, the jump and the accepted edit.

(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(qa-report-buffers "EGLOT")

(qa-run
 (lambda ()
   (qa-step "load the snippets")
   (require 'eglot)
   (load (qa-param :snippet) nil t)
   (load (qa-param :nextEdit) nil t)
   (setq eglot-sync-connect 30 eglot-autoshutdown nil)
   (qa-step "start eglot on a Python file")
   (with-current-buffer (qa-visit "geo.py" (qa-param :text))
     (apply #'eglot (eglot--guess-contact))
     (let ((server (qa-wait #'eglot-current-server 30 "Eglot to connect")))
       (qa-wait (lambda () (equal (plist-get (jsonrpc-request server :qodeassist/status nil)
                                             :state)
                                  "ready"))
                30 "the server to be ready")
       (qodeassist-next-edit-mode 1)
       (qa-step "rename the function in its definition")
       (qa-goto 0 4)
       (delete-region (point) (+ (point) 4))
       (insert "surface")
       (qa-step "ask for the next edit")
       (qodeassist-next-edit-request)
       (let ((overlay (qa-wait (lambda () qodeassist-next-edit--overlay) 20
                               "the next-edit overlay")))
         (qa-record :replaced (buffer-substring-no-properties (overlay-start overlay)
                                                              (overlay-end overlay)))
         (qa-record :face (symbol-name (overlay-get overlay 'face)))
         (qa-record :afterString (substring-no-properties
                                  (overlay-get qodeassist-next-edit--preview 'after-string))))
       (qa-step "jump to it and accept it")
       (goto-char (point-min))
       (qodeassist-next-edit-jump)
       (qa-record :jumpedTo (list (1- (line-number-at-pos)) (current-column)))
       (qodeassist-next-edit-accept)
       (qa-record :overlayAfterAccept (and qodeassist-next-edit--overlay t))
       (qa-record :text (buffer-substring-no-properties (point-min) (point-max)))
       (qa-wait (lambda ()
                  (let ((status (jsonrpc-request server :qodeassist/status nil)))
                    (equal (plist-get (plist-get status :nextEdit) :accepted) 1)))
                10 "the server to count the acceptance")
       (qa-record :status (plist-get (jsonrpc-request server :qodeassist/status nil) :nextEdit))))))
