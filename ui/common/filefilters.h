// The file dialogs' filters, one definition each for the window and the panels.
#pragma once

#include <QCoreApplication>
#include <QString>

namespace parrot {

// Every file a checkpoint can be opened from: the app's safetensors, a HuggingFace folder's config
// or weights, torch's pickles.
inline QString checkpointFileFilter()
{
    return QCoreApplication::translate("parrot", "Checkpoints (*.safetensors *.json *.bin *.pt *.pth);;All files (*)");
}

}  // namespace parrot
