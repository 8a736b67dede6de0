"""Canvas and CanvasNode are the index's now (agent_sessions 0009): state only. The keys of
revisions and branches point at the same tables as before; nothing in the database changes."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agent_sessions', '0009_canvas_models_from_canvases'),
        ('canvases', '0004_canvas_branch'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='canvasbranch',
                    name='canvas',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='branch_of', to='agent_sessions.canvas'),
                ),
                migrations.AlterField(
                    model_name='revision',
                    name='canvas',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='revisions', to='agent_sessions.canvas'),
                ),
                migrations.AlterField(
                    model_name='canvasbranch',
                    name='source',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='branches', to='agent_sessions.canvas'),
                ),
                migrations.RemoveField(
                    model_name='canvasnode',
                    name='canvas',
                ),
                migrations.RemoveField(
                    model_name='canvasnode',
                    name='agent',
                ),
                migrations.DeleteModel(
                    name='Canvas',
                ),
                migrations.DeleteModel(
                    name='CanvasNode',
                ),
            ],
            database_operations=[],
        ),
    ]
